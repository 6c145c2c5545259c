// Bundlers lay modules out in the order they are imported, and this order compresses smallest
// (npm run bench and size-limit measure it): consent and options, the shared modules, then the
// outbox before the other parts.
import { optedOut, STATES } from './consent'
import { readOptions } from './options'
import { checkUser, EVENT_NAMES, expectOneOf, validate } from '../shared/rules'
import { envelope } from '../shared/envelope'
import { feedbackError } from '../shared/error'
import type { EventName, User } from '../shared/types'
import { createOutbox } from './outbox'
import { createFaults } from './faults'
import { createDelivery } from './delivery'
import { createIdentity } from './identity'
import { followPage } from './lifecycle'
import type { Consent, Tracker, TrackerOptions } from './types'

/**
 * Creates a tracker from its parts: the options, read once; its faults; the outbox that keeps
 * events; the shopper's identity; delivery; the page's life cycle. The tracker itself holds
 * what its methods share: the consent state (consent.ts) and the last page viewed. Bad options are
 * reported, never thrown (unless `strict`): every call is then refused with the same clear
 * message, and the host page keeps running. Where there is no `window` (server rendering)
 * every call does nothing.
 */
export function createTracker(options: TrackerOptions): Tracker {
  const browser = typeof window == 'object'
  const [settings, user, broken] = readOptions(options, browser)
  const [dropped, drop, guard] = createFaults(settings, broken)
  const counts = { sent: 0, retried: 0 }
  // Aborted by destroy(): every listener and history patch goes with it.
  const life = new AbortController()
  const signal = life.signal

  // Parts exist only where they can run: in a browser, with options that work.
  const outbox = browser && !broken ? createOutbox(drop) : undefined
  const identity = outbox && createIdentity(settings, user)
  const blocked = outbox && optedOut(settings)
  let consent: Consent = blocked ? 'denied' : settings.consent || 'granted'
  const granted = () => consent == 'granted'
  // Storage only with consent, and not in memory mode.
  const persist = () => outbox!.setPersist(granted() && settings.storage != 'memory')
  if (outbox) persist()
  const delivery = outbox && createDelivery(settings, outbox, drop, counts, granted)
  let lastUrl: string | undefined

  const push = (event: EventName, properties: Record<string, unknown>) => {
    // Until consent, events wait without a user: reading or writing the identity cookies needs
    // consent too. They get the shopper's identity the moment it is granted.
    const entry = { event: envelope(event, properties, settings.key, granted() ? identity!.user(true) : (undefined as never)) }
    // Refused now rather than at sending: in the outbox it would take the place of events that can go.
    if (delivery!.tooLarge(entry)) return drop([entry], 'too_large')
    outbox!.add(entry)
    if (settings.debug) console.log('discovery-feedback:', event, properties)
    delivery!.queued()
  }

  /**
   * The way of every event, one direction: the rules, the envelope, the outbox, then a word to
   * delivery. A view-page is completed from the page: its URL, the last view's URL as `ref`,
   * the viewport. Throws a FeedbackError naming the event, the field and the rule.
   */
  const record = (event: EventName, input: unknown) => {
    // Broken options refuse every event with the fault that broke them.
    if (broken) throw broken
    if (!outbox) return
    if (signal.aborted) throw feedbackError(event, undefined, 'was tracked after destroy()')
    // Anything but an object is left to the rules, which refuse it by name.
    if (event == 'view-page' && (input == null || typeof input == 'object'))
      input = { url: location.href, ref: lastUrl ?? document.referrer, width: innerWidth, height: innerHeight, ...input }
    const properties = validate(event, input)
    if (consent == 'denied') return
    if (event == 'view-page') lastUrl = properties.url as string
    // SPEC "Event kinds": a click-item is sent along with add-to-cart, whichever way it is
    // tracked. Its rules pick its fields out of the add-to-cart's, which passed stricter ones.
    if (event == 'add-to-cart') push('click-item', validate('click-item', properties))
    push(event, properties)
  }

  if (outbox)
    followPage(
      settings,
      // The automatic view-page: skipped when the page's URL is the one last viewed.
      guard(() => location.href != lastUrl && record('view-page', {})),
      // Back from the back/forward cache: to the shopper a new view, even of the same URL.
      () => (lastUrl = undefined),
      outbox,
      delivery!,
      signal
    )

  const track = guard(record)
  const flush = (): Promise<void> => (delivery ? delivery.flush() : Promise.resolve())

  // The public methods: each runs inside the guard, so nothing a caller passes throws into the page.
  const tracker: Record<string, unknown> = {
    track,
    identify: guard((fields: Partial<User>) => {
      const checked = checkUser('identify', fields)
      if (identity) identity.identify(checked)
    }),
    consent: guard((next: Consent) => {
      if (!outbox) return
      expectOneOf('consent', 'state', STATES, next)
      if (blocked) return
      consent = next
      if (next == 'denied') {
        // Withdrawn: nothing of ours stays behind, and nothing more is stored or sent.
        outbox.forget()
        identity!.forget()
      }
      // Events tracked while pending get the shopper's identity now; their wire text is made
      // again (wire reset) with it.
      if (granted()) for (const entry of outbox.entries) entry.event.user ||= ((entry.wire = undefined), identity!.user(true))
      persist()
      if (granted()) delivery!.wake()
    }),
    reset: guard(() => {
      // Logout on a shared computer: what the last shopper did leaves under their ids first.
      flush()
      if (identity) identity.forget(true)
    }),
    get user() {
      return identity ? identity.user(granted()) : ({ uid: '', sid: '' } as User)
    },
    stats: () => ({ queued: outbox ? outbox.entries.length : 0, ...counts, dropped: { ...dropped } }),
    flush,
    destroy: guard(() => {
      if (signal.aborted) return
      life.abort()
      flush()
    })
  }
  // One method per event, named after it: clickSuggestion for click-suggestion, and so on.
  for (const event of EVENT_NAMES) {
    tracker[event.replace(/-(\w)/g, (_, letter: string) => letter.toUpperCase())] = (properties: unknown) => track(event, properties)
  }
  return tracker as unknown as Tracker
}
