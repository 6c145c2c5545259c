import { createClient } from './client'
import type { ClientOptions } from './types'

/*
 * Script-tag build of the discovery client. After the tracker's script tag, the page calls
 * `discoveryFeedbackClient.createClient({ key, baseUrl })`; the page's tracker, once loaded,
 * is linked by default, so its clicks carry the rids of the responses.
 */
;(window as any).discoveryFeedbackClient = {
  createClient: (options: ClientOptions) => {
    const global = (window as any).discoveryFeedback
    return createClient({ tracker: global && global.tracker, ...options })
  }
}
