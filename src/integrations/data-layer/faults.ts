import { feedbackError, isFeedbackError, thrownText } from '../../shared/error'
import type { FeedbackError } from '../../shared/types'

/**
 * What was thrown while a GA4 event was read, as a FeedbackError naming the GA4 event and the
 * field. The mapping's own errors name them already; anything else came from the page's data
 * (a getter that throws, a Proxy) or from the shop's itemIds(), and gets them here.
 */
export function readFault(event: string | undefined, field: string | undefined, caught: unknown): FeedbackError {
  return isFeedbackError(caught) ? caught : feedbackError(event, field, 'could not be read: ' + thrownText(caught))
}
