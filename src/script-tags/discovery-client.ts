import type { CommandFunction } from '../browser/types'
import { createClient, createRecommendations } from '../client'
import type { ClientOptions } from '../client/types'

/*
 * The discovery client's script tag (dist/discovery-feedback-client.min.js):
 * `discoveryFeedbackClient.createClient({ key, baseUrl })` and
 * `discoveryFeedbackClient.createRecommendations(client)`. The page's tracker
 * (window.discoveryFeedback.tracker) is linked as soon as it has loaded, whichever script comes
 * first, so its clicks carry the rids of the responses.
 */

const page = window as Window & { discoveryFeedback?: Partial<CommandFunction>; discoveryFeedbackClient?: unknown }

page.discoveryFeedbackClient = {
  createClient: (options: ClientOptions) => createClient({ tracker: () => page.discoveryFeedback?.tracker, ...options }),
  createRecommendations
}
