import { tooLarge } from './batch'
import { createConsent } from './consent'
import { createDelivery } from './delivery'
import { envelope } from './envelope'
import { feedbackError } from './error'
import { createFaults } from './faults'
import { createIdentity } from './identity'
import { listen, onLifecycle } from './lifecycle'
import { createOutbox, type Entry } from './outbox'
import { autoViewPages } from './pageviews'
import { checkOptions, checkUser, EVENTS, validate } from './rules'
import type { Consent, EventName, FeedbackError, Tracker, TrackerOptions, User } from './types'

// 60 KiB leaves room under the browser's 64 KiB keepalive budget for request overhead.
const MAX_BODY = 61440
// Orphans of other pages (a tab that closed while its collector was unreachable) are looked
// for at start, and again at most this often once this page has nothing left to send.
const ADOPT_EVERY = 10000

/**
 * Creates a tracker. Bad options are reported, never thrown (unless `strict`): the tracker
 * then refuses every call with the same clear message, and the host page keeps running.
 * Where there is no `window` (server rendering) every call does nothing.
 */
export function createTracker(options: TrackerOptions): Tracker {
  // A copy, read once: getters on the caller's object run here, inside a guard, and never again.
  let settings = {} as TrackerOptions
  let broken: FeedbackError | undefined
  try {
    settings = { ...options }
  } catch {
    broken = feedbackError('init', 'options', 'could not be read')
  }
  const faults = createFaults(settings)
  const guard = faults.guard
  const browser = typeof window == 'object'
  let overrides: Partial<User> = {}
  if (browser && !broken) {
    try {
      overrides = checkOptions(settings)
    } catch (error) {
      broken = error as FeedbackError
    }
  }
  if (broken) {
    // The tracker then refuses every call with the same error.
    if (settings.strict) throw broken
    faults.report(broken)
  }
  const key = settings.key
  const maxBytes = Math.min(settings.maxBatchBytes || MAX_BODY, MAX_BODY)
  const counts = { sent: 0, retried: 0 }
  let lastUrl: string | undefined
  let adoptedAt = 0
  // Aborted by destroy(): every listener and history patch goes with it.
  const life = new AbortController()
  const signal = life.signal

  const live = browser && !broken
  const outbox = live ? createOutbox(faults.drop) : undefined
  const identity = live ? createIdentity(settings) : undefined
  const shopper = () => identity!.user(overrides, true)
  const adopt = () => {
    if (!consent!.granted() || settings.storage == 'memory') return
    adoptedAt = Date.now()
    outbox!.adopt().then((adopted) => {
      if (adopted) delivery!.send(false)
    })
  }
  const consent = outbox && identity && createConsent(settings, outbox, identity, shopper, () => {
    adopt()
    delivery!.send(false)
  })
  const delivery =
    outbox &&
    createDelivery(
      settings,
      maxBytes,
      outbox,
      faults.drop,
      counts,
      () => consent!.granted(),
      () => Date.now() - adoptedAt > ADOPT_EVERY && adopt()
    )

  // Until consent, events wait without a user: reading or writing the identity cookies needs
  // consent too. They get the shopper's identity the moment it is granted.
  const push = (event: EventName, properties: Record<string, unknown>) => {
    const entry: Entry = { event: envelope(event, properties, key, consent!.granted() ? shopper() : (undefined as never)) }
    // Refused now rather than at sending: in the outbox it would take the place of events that can go.
    if (tooLarge(entry, maxBytes)) return faults.drop([entry], 'too_large')
    outbox!.add(entry)
    if (settings.debug) console.log('discovery-feedback:', event, properties)
    delivery!.queued()
  }

  const record = (event: EventName, input: unknown) => {
    if (broken) throw broken
    if (!outbox) return
    if (signal.aborted) throw feedbackError(event, undefined, 'was tracked after destroy()')
    if (event == 'view-page') {
      if (input != null && typeof input != 'object') throw feedbackError(event, 'properties', 'must be an object')
      input = { url: location.href, ref: lastUrl ?? document.referrer, width: innerWidth, height: innerHeight, ...(input as object) }
    }
    const properties = validate(event, input)
    if (consent!.denied()) return
    if (event == 'view-page') lastUrl = properties.url as string
    // SPEC "Event kinds": a click-item is sent along with add-to-cart, whichever way it is tracked.
    if (event == 'add-to-cart') push('click-item', { rid: properties.rid, item_id: properties.item_id, variant_item_id: properties.variant_item_id })
    push(event, properties)
  }

  const flush = (): Promise<void> => (delivery ? delivery.flush() : Promise.resolve())

  if (outbox && delivery) {
    listen(
      window,
      'online',
      () => {
        delivery.retryNow()
        adopt()
      },
      signal
    )
    onLifecycle(
      delivery.send,
      () => {
        delivery.send(true)
        outbox.suspend()
      },
      () => {
        // To the shopper, a page back from the cache is a new view, even of the same URL.
        lastUrl = undefined
        outbox.resume()
        delivery.send(false)
      },
      signal
    )
    signal.addEventListener('abort', delivery.stop)
    // What earlier pages left unsent goes first.
    adopt()
    if (settings.autoViewPage !== false) {
      autoViewPages(
        guard(() => location.href != lastUrl && record('view-page', {})),
        signal
      )
    }
  }

  const tracker: Record<string, unknown> = {
    track: guard(record),
    identify: guard((user: Partial<User>) => {
      overrides = { ...overrides, ...checkUser('identify', user) }
    }),
    consent: guard((state: Consent) => consent && consent.set(state)),
    reset: guard(() => {
      // Logout on a shared computer: what the last shopper did leaves under their ids first.
      flush()
      const { uid, sid, email, ...rest } = overrides
      overrides = rest
      identity && identity.forget()
    }),
    get user() {
      return identity ? identity.user(overrides, consent!.granted()) : ({ uid: '', sid: '' } as User)
    },
    stats: () => ({ queued: outbox ? outbox.entries.length : 0, ...counts, dropped: { ...faults.dropped } }),
    flush,
    destroy: guard(() => {
      if (signal.aborted) return
      life.abort()
      flush()
    })
  }
  // One method per event, named after it: clickSuggestion for click-suggestion, and so on.
  for (const event of Object.keys(EVENTS) as EventName[]) {
    tracker[event.replace(/-(\w)/g, (_, letter: string) => letter.toUpperCase())] = guard((properties: unknown) => record(event, properties))
  }
  return tracker as unknown as Tracker
}
