import { createClient, createRecommendations } from './client'
import type { ClientOptions } from './client/types'

/*
 * Script-tag build of the discovery client: `discoveryFeedbackClient.createClient({ key,
 * baseUrl })` and `discoveryFeedbackClient.createRecommendations(client)`. The page's tracker
 * (window.discoveryFeedback.tracker) is linked as soon as it has loaded, whichever script
 * comes first, so its clicks carry the rids of the responses.
 */
;(window as any).discoveryFeedbackClient = {
  createClient: (options: ClientOptions) =>
    createClient({
      tracker: () => (window as any).discoveryFeedback?.tracker,
      ...options
    }),
  createRecommendations
}
