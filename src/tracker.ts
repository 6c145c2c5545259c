import { tooLarge } from './batch'
import { createDelivery, type Reason } from './delivery'
import { envelope } from './envelope'
import { feedbackError } from './error'
import { checkUser, createIdentity } from './identity'
import { onHidden, onRestore } from './lifecycle'
import { onNavigate } from './navigation'
import { createOutbox, MAX_CHARS, MAX_EVENTS, type Entry } from './outbox'
import { validate } from './rules'
import type { Consent, EventName, FeedbackError, Stats, Tracker, TrackerOptions, User } from './types'

// 60 KiB leaves room under the browser's 64 KiB keepalive budget for request overhead.
const MAX_BODY = 61440

const isFeedbackError = (error: any): error is FeedbackError => error && error.name == 'FeedbackError'

const WHY: Record<Reason, string> = {
  too_large: 'is larger than a request may be',
  rejected: 'refused',
  overflow: 'over the outbox bound of ' + MAX_EVENTS + ' events or ' + MAX_CHARS + ' characters',
  expired: 'older than 7 days'
}

/**
 * Creates a tracker. Bad options are reported, never thrown (unless `strict`): the tracker
 * then refuses every call with the same clear message, and the host page keeps running.
 * Where there is no `window` (server rendering) every call does nothing.
 */
export function createTracker(options: TrackerOptions): Tracker {
  // A copy, read once: getters on the caller's object run here, inside a guard, and never again.
  let settings = {} as TrackerOptions
  let unreadable = false
  try {
    settings = { ...options }
  } catch {
    unreadable = true
  }
  const { key, endpoint, onError, strict, debug } = settings
  const maxEvents = settings.maxBatchEvents || 20
  const maxBytes = Math.min(settings.maxBatchBytes || 16384, MAX_BODY)
  const interval = settings.flushInterval ?? 1000
  const browser = typeof window == 'object'
  const memoryOnly = settings.storage == 'memory'
  // Global Privacy Control is a legally binding opt-out in several US states; Do-Not-Track
  // is deprecated and only honoured when the site asks for it.
  const optedOut =
    browser &&
    (((navigator as any).globalPrivacyControl && !settings.ignoreGlobalPrivacyControl) ||
      (settings.respectDoNotTrack && navigator.doNotTrack == '1'))
  let consent: Consent = optedOut ? 'denied' : settings.consent || 'granted'
  const granted = () => consent == 'granted'

  let timer: ReturnType<typeof setTimeout> | undefined
  let timerDue = Infinity
  let lastUrl: string | undefined
  let overrides: Partial<User> = {}
  let broken: FeedbackError | undefined
  let stopped = false
  const counts = { sent: 0, retried: 0 }
  const dropped: Stats['dropped'] = { invalid: 0, too_large: 0, rejected: 0, overflow: 0, expired: 0 }

  /** Every fault ends here: the console for the developer, onError for the shop's monitoring. */
  const report = (error: FeedbackError) => {
    // Neither a console that a page replaced nor a failing handler may turn one fault into two.
    try {
      console.error(error.message)
    } catch {}
    try {
      onError && onError(error)
    } catch {}
  }

  const drop = (entries: Entry[], reason: Reason, detail?: string) => {
    dropped[reason] += entries.length
    const one = entries.length == 1
    report(
      feedbackError(
        one ? entries[0].event.event : undefined,
        undefined,
        (one ? 'event' : entries.length + ' events') + ' dropped: ' + WHY[reason] + (detail ? ', ' + detail : '')
      )
    )
  }

  /**
   * Public methods run inside this: nothing a caller's data throws reaches the page, except in
   * strict mode. What was thrown may itself throw when read (a getter throwing
   * `Object.create(null)`, an error whose toString throws), so it is read inside a guard too.
   */
  const guard =
    <A extends unknown[], R>(method: (...args: A) => R) =>
    (...args: A): R | undefined => {
      try {
        return method(...args)
      } catch (caught) {
        let error: FeedbackError
        try {
          error = isFeedbackError(caught) ? caught : feedbackError(undefined, undefined, 'failed: ' + String(caught))
        } catch {
          error = feedbackError(undefined, undefined, 'failed: ' + typeof caught + ' thrown')
        }
        dropped.invalid++
        if (strict) throw error
        report(error)
      }
    }

  const outbox = browser ? createOutbox(drop, granted() && !memoryOnly) : undefined
  const delivery = outbox && createDelivery(endpoint, outbox, maxBytes, drop, counts, granted)
  const identity = browser ? createIdentity(settings) : undefined

  let adoptedAt = 0
  // Orphans of other pages (a tab that closed while its collector was unreachable) are looked
  // for at start, and again at most every 10 s once this page has nothing left to send.
  const adopt = () => {
    if (!granted() || memoryOnly) return
    adoptedAt = Date.now()
    outbox!.adopt().then((adopted) => {
      if (adopted) flush()
    })
  }

  const flush = (): Promise<void> => {
    clearTimeout(timer)
    timerDue = Infinity
    return delivery
      ? delivery.send(false).then(() => {
          if (!outbox!.entries.length && Date.now() - adoptedAt > 10000) adopt()
        })
      : Promise.resolve()
  }

  const schedule = (delay: number) => {
    const due = Date.now() + delay
    if (due < timerDue) {
      clearTimeout(timer)
      timerDue = due
      timer = setTimeout(flush, delay)
    }
  }

  // Until consent, events wait without a user: reading or writing the identity cookies needs
  // consent too. They get the shopper's identity the moment it is granted.
  const push = (event: EventName, properties: Record<string, unknown>) => {
    const entry: Entry = { event: envelope(event, properties, key, granted() ? identity!.user(overrides, true) : (undefined as never)) }
    // Refused now rather than at sending: in the outbox it would take the place of events that can go.
    if (tooLarge(entry, maxBytes)) return drop([entry], 'too_large')
    outbox!.add(entry)
    if (debug) console.log('discovery-feedback:', event, properties)
    schedule(outbox!.entries.length < maxEvents ? interval : 0)
  }

  const record = <E extends EventName>(event: E, input: unknown) => {
    if (!identity) return
    if (broken) throw broken
    if (stopped) throw feedbackError(event, undefined, 'was tracked after destroy()')
    if (event == 'view-page') {
      if (input != null && typeof input != 'object') throw feedbackError(event, 'properties', 'must be an object')
      input = {
        url: location.href,
        ref: lastUrl ?? document.referrer,
        width: innerWidth,
        height: innerHeight,
        ...(input as object)
      }
    }
    const properties = validate(event, input)
    if (consent == 'denied') return
    if (event == 'view-page') lastUrl = properties.url as string
    // SPEC "Event kinds": a click-item is sent along with add-to-cart, whichever way it is tracked.
    if (event == 'add-to-cart') push('click-item', { rid: properties.rid, item_id: properties.item_id, variant_item_id: properties.variant_item_id })
    push(event, properties)
  }

  // A template or a router may describe the page itself (a product page adds item_id)
  // right after the page or route appears, so the automatic view waits one task and is
  // skipped when the page was already viewed.
  const viewSoon = guard(() => {
    setTimeout(
      guard(() => {
        if (!stopped && location.href != lastUrl) record('view-page', {})
      })
    )
  })

  const cleanups: (() => void)[] = []
  if (!browser) {
    // Server rendering: nothing to track, nothing to report.
  } else if (unreadable) {
    broken = feedbackError('init', 'options', 'could not be read')
  } else if (!key || typeof key != 'string') {
    broken = feedbackError('init', 'key', 'is required')
  } else if (!endpoint || typeof endpoint != 'string') {
    broken = feedbackError('init', 'endpoint', 'is required')
  } else {
    try {
      if (settings.user) overrides = checkUser('init', settings.user)
    } catch (error) {
      broken = error as FeedbackError
    }
  }
  if (broken) {
    if (strict) throw broken
    report(broken)
  } else if (outbox && delivery) {
    const online = () => {
      delivery.retryNow()
      adopt()
    }
    const visible = () => {
      if (document.visibilityState != 'visible') return
      // Back from hidden: what beacons took then is confirmed by fetch now.
      outbox.entries.forEach((entry) => (entry.beaconed = false))
      flush()
    }
    addEventListener('online', online)
    document.addEventListener('visibilitychange', visible)
    cleanups.push(
      onHidden((leaving) => {
        clearTimeout(timer)
        timerDue = Infinity
        delivery.send(true)
        if (leaving) outbox.suspend()
      }),
      onRestore(() => {
        outbox.resume()
        flush()
      }),
      () => removeEventListener('online', online),
      () => document.removeEventListener('visibilitychange', visible),
      delivery.stop
    )
    // What earlier pages left unsent goes first.
    adopt()
    if (settings.autoViewPage !== false) {
      cleanups.push(
        onNavigate(viewSoon),
        onRestore(() => {
          lastUrl = undefined
          viewSoon()
        })
      )
      if (document.readyState == 'loading') {
        addEventListener('DOMContentLoaded', viewSoon, { once: true })
        cleanups.push(() => removeEventListener('DOMContentLoaded', viewSoon))
      } else viewSoon()
    }
  }

  const setConsent = (state: Consent) => {
    if (state != 'granted' && state != 'pending' && state != 'denied') {
      throw feedbackError('consent', 'state', "must be 'granted', 'pending' or 'denied'")
    }
    if (!outbox || optedOut) return
    consent = state
    if (state == 'denied') {
      // Withdrawn: nothing of ours stays behind, and nothing more is stored or sent.
      outbox.forget()
      identity!.forget()
    } else if (state == 'granted') {
      for (const entry of outbox.entries) {
        if (!entry.event.user) {
          entry.event.user = identity!.user(overrides, true)
          entry.json = undefined
        }
      }
      outbox.setPersist(!memoryOnly)
      adopt()
      flush()
    } else outbox.setPersist(false)
  }

  const helper =
    <E extends EventName>(event: E) =>
    (properties: unknown) =>
      record(event, properties)

  return {
    clickSuggestion: guard(helper('click-suggestion')),
    clickItem: guard(helper('click-item')),
    redirect: guard(helper('redirect')),
    purchase: guard(helper('purchase')),
    updateCart: guard(helper('update-cart')),
    addToCart: guard(helper('add-to-cart')),
    viewPage: guard(helper('view-page')),
    track: guard(record),
    identify: guard((user: Partial<User>) => {
      overrides = { ...overrides, ...checkUser('identify', user) }
    }),
    consent: guard(setConsent),
    reset: guard(() => {
      // Logout on a shared computer: what the last shopper did leaves under their ids first.
      flush()
      const { uid, sid, email, ...rest } = overrides
      overrides = rest
      identity && identity.forget()
    }),
    get user() {
      return identity ? identity.user(overrides, granted()) : ({ uid: '', sid: '' } as User)
    },
    stats: () => ({ queued: outbox ? outbox.entries.length : 0, ...counts, dropped: { ...dropped } }),
    flush,
    destroy: guard(() => {
      if (stopped) return
      cleanups.forEach((cleanup) => cleanup())
      flush()
      stopped = true
    })
  } as Tracker
}
