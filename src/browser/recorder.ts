import { envelope } from '../shared/envelope'
import { feedbackError } from '../shared/error'
import { validate } from '../shared/rules'
import type { EventName } from '../shared/types'
import type { ConsentControl } from './consent'
import type { Delivery } from './delivery'
import type { Faults } from './faults'
import type { Identity } from './identity'
import type { Outbox } from './outbox'
import type { TrackerOptions } from './types'

/**
 * The way of every event, one direction: the rules, the envelope, the outbox, then a word to
 * delivery. A view-page is completed from the page: its URL, the last view's URL as `ref`,
 * the viewport. Until consent, events wait without a user: reading or writing the identity
 * cookies needs consent too. They get the shopper's identity the moment it is granted.
 */
export function createRecorder(
  settings: TrackerOptions,
  faults: Faults,
  outbox: Outbox,
  identity: Identity,
  consent: ConsentControl,
  delivery: Delivery,
  signal: AbortSignal
) {
  let lastUrl: string | undefined

  const push = (event: EventName, properties: Record<string, unknown>) => {
    const entry = { event: envelope(event, properties, settings.key, consent.granted() ? identity.user(true) : (undefined as never)) }
    // Refused now rather than at sending: in the outbox it would take the place of events that can go.
    if (delivery.tooLarge(entry)) return faults.drop([entry], 'too_large')
    outbox.add(entry)
    if (settings.debug) console.log('discovery-feedback:', event, properties)
    delivery.queued()
  }

  /** Tracks an event; throws a FeedbackError naming the event, the field and the rule. */
  const record = (event: EventName, input: unknown) => {
    if (signal.aborted) throw feedbackError(event, undefined, 'was tracked after destroy()')
    // Anything but an object is left to the rules, which refuse it by name.
    if (event == 'view-page' && (input == null || typeof input == 'object'))
      input = { url: location.href, ref: lastUrl ?? document.referrer, width: innerWidth, height: innerHeight, ...input }
    const properties = validate(event, input)
    if (consent.denied()) return
    if (event == 'view-page') lastUrl = properties.url as string
    // SPEC "Event kinds": a click-item is sent along with add-to-cart, whichever way it is
    // tracked. Its rules pick its fields out of the add-to-cart's, which passed stricter ones.
    if (event == 'add-to-cart') push('click-item', validate('click-item', properties))
    push(event, properties)
  }

  return {
    record,
    /** The automatic view-page: skipped when the page's URL is the one last viewed. */
    view: () => location.href != lastUrl && record('view-page', {}),
    /** Back from the back/forward cache: to the shopper a new view, even of the same URL. */
    forget: () => (lastUrl = undefined)
  }
}

export type Recorder = ReturnType<typeof createRecorder>
