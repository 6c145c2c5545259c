import { nanoid } from 'nanoid'
import { pack } from './batch'
import { envelope } from './envelope'
import { feedbackError } from './error'
import type { Entry } from './outbox'
import { checkUser, validate } from './rules'
import type { EventName, EventProperties, User } from './types'

/** Settings of the identity cookie a shop's server writes. */
export interface IdentityCookieOptions {
  /** Cookie domain, e.g. `'shop.example'` to share it with subdomains; as `cookieDomain` in the browser. */
  domain?: string
  /** Send it with `Secure`. Default true; turn off only for plain-http development. */
  secure?: boolean
  /** Lifetime in days; browsers keep at most 400. Default 400. */
  days?: number
}

// Same name and id shape as the browser side (src/identity.ts), which picks it up as its own.
const UID_COOKIE = 'df_uid'
const OUR_ID = /^[\w-]{1,32}$/

function readCookie(header: unknown, name: string): string | undefined {
  // Anything but a string (a header array, a number) counts as no cookie.
  for (const part of (typeof header == 'string' ? header : '').split(';')) {
    const [key, ...value] = part.trim().split('=')
    if (key == name) {
      try {
        return decodeURIComponent(value.join('='))
      } catch {
        return undefined
      }
    }
  }
}

/**
 * Safari's tracking prevention (ITP) caps cookies written by script at 7 days, so a shopper
 * who comes back after a week looks new. A cookie set by the site's own server in an HTTP
 * response is not capped. Call this on page responses and send its `setCookie` as a
 * `Set-Cookie` header: it keeps the uid the browser already has (or makes one) and renews it
 * for `days`. It is not HttpOnly, so the tracker in the page reads it as its own.
 *
 * @example
 * const { setCookie } = identityCookie(request.headers.cookie)
 * response.setHeader('Set-Cookie', setCookie)
 */
export function identityCookie(cookieHeader: unknown, options: IdentityCookieOptions = {}): { uid: string; setCookie: string } {
  const found = readCookie(cookieHeader, UID_COOKIE)
  const uid = found && OUR_ID.test(found) ? found : nanoid()
  const days = Math.min(options.days || 400, 400)
  const setCookie =
    `${UID_COOKIE}=${uid}; Path=/; Max-Age=${days * 86400}; SameSite=Lax` +
    (options.domain ? '; Domain=' + options.domain : '') +
    (options.secure === false ? '' : '; Secure')
  return { uid, setCookie }
}

/** Settings of a server-side tracker. */
export interface ServerTrackerOptions {
  /** Merchant API key, sent as `key` in every event. */
  key: string
  /** Collector URL. */
  endpoint: string
  /** Send once this many events wait; a request still takes all that fit in 60 KiB. Default 50. */
  maxBatchEvents?: number
  /** Milliseconds an event may wait for others. Default 1000. */
  flushInterval?: number
  /** Requests in flight at once, however busy the shop. Default 4. */
  maxInFlight?: number
  /** Events held while the collector cannot take them (about 1 KB each); beyond it the oldest are dropped and reported. Default 20,000. */
  maxQueuedEvents?: number
  /** Tries per event before it is given up and reported. Default 6 (about a minute of backoff). */
  maxAttempts?: number
  /** Milliseconds a request may go unanswered before it counts as failed. Default 10,000. */
  requestTimeout?: number
  /** Hears every event given up: refused, overflowing, or out of tries. */
  onError?: (error: Error) => void
}

/** Counts of a server tracker's events, as the browser tracker's `stats()`. */
export interface ServerStats {
  /** Waiting or in flight. */
  queued: number
  /** Answered 2xx. */
  sent: number
  /** Sends that failed and will be tried again. */
  retried: number
  dropped: {
    /** Calls the rules refused (track threw). */
    invalid: number
    /** An event larger than a request may be. */
    too_large: number
    /** The collector answered a 4xx other than 408 and 429. */
    rejected: number
    /** Beyond `maxQueuedEvents`, oldest first. */
    overflow: number
    /** Out of tries, or still unsent when `close` ran out of time. */
    undelivered: number
  }
}

/** How long `flush` and `close` may take. */
export interface WaitOptions {
  /** Milliseconds; default 10,000. */
  timeout?: number
}

/** The shopper of a call from the shop's server: SPEC asks for ip and ua when the browser is not the caller. */
export type ServerUser = User & { ip: string; ua: string }

export interface ServerTracker {
  /**
   * Queues an event for a shopper who is not on the line: a purchase from an order webhook.
   * `user` needs uid and sid (the ones the browser had, e.g. from the order's cookies) and,
   * as SPEC asks when the call does not come from the shopper's browser, ip and ua.
   * Throws a FeedbackError naming the event, the field and the rule.
   */
  track<E extends EventName>(event: E, properties: EventProperties[E], user: ServerUser): void
  /** Sends what waits now; resolves once nothing is left, or at the timeout with the rest still queued. */
  flush(options?: WaitOptions): Promise<void>
  /** Shutdown: sends what it can until the timeout, then gives up the rest and reports it. */
  close(options?: WaitOptions): Promise<void>
  stats(): ServerStats
}

/** A queued event and the tries it has had. */
type Queued = Entry & { tries?: number }

const BODY_BYTES = 61440

/**
 * Sends events from a shop's backend (Node 18+, global fetch), with the browser's rules. The
 * shop sends most when it is busiest, which is when the collector may struggle: a few requests
 * at a time, and one backoff for the whole sender, so a collector that says "back off" hears a
 * handful of requests per step instead of one per batch.
 */
export function createServerTracker(options: ServerTrackerOptions): ServerTracker {
  const { key, endpoint, maxBatchEvents = 50, flushInterval = 1000, maxInFlight = 4, maxQueuedEvents = 20000, maxAttempts = 6, requestTimeout = 10000 } = options
  if (!key || !endpoint) throw feedbackError('init', key ? 'endpoint' : 'key', 'is required')
  const counts = { sent: 0, retried: 0 }
  const dropped = { invalid: 0, too_large: 0, rejected: 0, overflow: 0, undelivered: 0 }
  let queue: Queued[] = []
  const inFlight = new Set<AbortController>()
  let carried = 0
  // The shared backoff: failures in a row, and no request starts before `resumeAt`.
  let failures = 0
  let resumeAt = 0
  let timer: ReturnType<typeof setTimeout> | undefined
  let due = Infinity
  let hurry = false
  let closed = false
  const idle = new Set<() => void>()

  const report = (error: Error) => {
    try {
      options.onError ? options.onError(error) : console.error(error.message)
    } catch {}
  }
  const drop = (count: number, reason: keyof typeof dropped, why: string) => {
    dropped[reason] += count
    report(feedbackError(undefined, undefined, count + (count == 1 ? ' event' : ' events') + ' dropped: ' + why))
  }
  // Overflow is reported once per burst, not once per event of a 50,000-event burst.
  let overflowing = 0
  const overflow = (count: number) => {
    if (!overflowing) {
      queueMicrotask(() => {
        drop(overflowing, 'overflow', 'more than ' + maxQueuedEvents + ' waited for the collector')
        overflowing = 0
      })
    }
    overflowing += count
  }

  /** Runs `pump` at `at` (ms since epoch), or sooner if it is already due sooner. */
  const wake = (at: number) => {
    if (at >= due) return
    clearTimeout(timer)
    due = at
    timer = setTimeout(() => ((due = Infinity), pump()), Math.max(0, at - Date.now()))
  }

  function settle() {
    if (!queue.length && !inFlight.size) idle.forEach((resolve) => resolve())
  }

  /** Starts requests while a slot is free, the backoff allows and a batch is ready (or asked for). */
  function pump() {
    const now = Date.now()
    if (now < resumeAt) return wake(resumeAt)
    while (queue.length && inFlight.size < maxInFlight) {
      // t_client is when the oldest was tracked; a clock set back meanwhile must not hold it longer.
      const oldest = Math.min(queue[0].event.t_client, now)
      if (!hurry && queue.length < maxBatchEvents && now - oldest < flushInterval) return wake(oldest + flushInterval)
      // One body at a time, as large as 60 KiB allows: events that waited for a slot go together.
      const taken = new Set<Entry>()
      const [batch] = pack(queue, BODY_BYTES, (entry) => (taken.add(entry), drop(1, 'too_large', entry.event.event + ' is too large for a request')), 1)
      if (batch) batch[1].forEach((entry) => taken.add(entry))
      queue = queue.filter((entry) => !taken.has(entry))
      if (batch) send(batch[0], batch[1])
    }
    settle()
  }

  async function send(body: string, batch: Queued[]) {
    const controller = new AbortController()
    inFlight.add(controller)
    carried += batch.length
    const timeout = setTimeout(() => controller.abort(), requestTimeout)
    // The backoff step this request started in: the requests of one step fail together, and
    // count as one failure, not four.
    const step = failures
    let status = 0
    let retryAfter: string | null = null
    try {
      const response = await fetch(endpoint + (endpoint.includes('?') ? '&' : '?') + 't_sent=' + Date.now(), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        signal: controller.signal
      })
      status = response.status
      retryAfter = response.headers.get('retry-after')
      // Read to the end, so that the connection can be reused.
      await response.arrayBuffer().catch(() => {})
    } catch {
      // No answer, or none in time: a failure like a 503.
    }
    clearTimeout(timeout)
    carried -= batch.length
    // Given up by close(): already counted there.
    if (!inFlight.delete(controller)) return
    if (status > 199 && status < 300) {
      counts.sent += batch.length
      failures = 0
    } else if (status > 399 && status < 500 && status != 408 && status != 429) {
      drop(batch.length, 'rejected', 'the collector answered ' + status)
    } else {
      // Every retryable failure moves the one backoff: Retry-After when the collector gives it,
      // else exponential from 1 s to 60 s with jitter (half to all of the step).
      if (failures == step) failures++
      const seconds = retryAfter ? Number(retryAfter) : NaN
      const asked = retryAfter && isNaN(seconds) ? Date.parse(retryAfter) - Date.now() : seconds * 1000
      const wait = asked >= 0 ? asked : Math.min(1000 * 2 ** (failures - 1), 60000) * (0.5 + Math.random() / 2)
      resumeAt = Math.max(resumeAt, Date.now() + wait)
      const spent = batch.filter((entry) => (entry.tries = (entry.tries || 0) + 1) >= maxAttempts)
      const again = batch.filter((entry) => entry.tries! < maxAttempts)
      if (spent.length) drop(spent.length, 'undelivered', 'the collector answered ' + (status || 'nothing') + ' ' + maxAttempts + ' times')
      counts.retried += again.length
      // Back at the front, in their order: they are the oldest.
      queue = [...again, ...queue]
    }
    pump()
  }

  /** Resolves when nothing waits or flies, or after `timeout` ms: true if it timed out. */
  function drain(timeout: number): Promise<boolean> {
    hurry = true
    pump()
    if (!queue.length && !inFlight.size) return Promise.resolve(false)
    return new Promise((resolve) => {
      const done = (late: boolean) => {
        clearTimeout(limit)
        idle.delete(finished)
        if (!idle.size) hurry = closed
        resolve(late)
      }
      const finished = () => done(false)
      const limit = setTimeout(() => done(true), timeout)
      idle.add(finished)
    })
  }

  return {
    track(event, properties, user) {
      if (closed) throw feedbackError(event, undefined, 'was tracked after close()')
      let entry: Queued
      try {
        const checked = checkUser(event, user)
        for (const field of ['uid', 'sid', 'ip', 'ua'] as const) {
          if (!checked[field]) {
            const hint = field == 'ip' || field == 'ua' ? "the shopper's, as SPEC asks for calls not made from their browser" : "the id the shopper's browser had"
            throw feedbackError(event, 'user.' + field, 'is required on the server: ' + hint)
          }
        }
        entry = { event: envelope(event, validate(event, properties), key, checked as User) }
      } catch (error) {
        dropped.invalid++
        throw error
      }
      queue.push(entry)
      if (queue.length > maxQueuedEvents) {
        const over = queue.length - maxQueuedEvents
        queue = queue.slice(over)
        overflow(over)
      }
      if (queue.length >= maxBatchEvents) pump()
      else wake(entry.event.t_client + flushInterval)
    },
    flush: ({ timeout = 10000 } = {}) => drain(timeout).then(() => {}),
    close({ timeout = 10000 } = {}) {
      closed = true
      return drain(timeout).then((late) => {
        if (!late) return
        // Out of time: what waits or flies now is given up, and said so.
        const left = queue.length + carried
        queue = []
        inFlight.forEach((controller) => controller.abort())
        inFlight.clear()
        clearTimeout(timer)
        if (left) drop(left, 'undelivered', 'close() ran out of time after ' + timeout + ' ms')
      })
    },
    stats: () => ({ queued: queue.length + carried, ...counts, dropped: { ...dropped } })
  }
}

export type { EventName, EventProperties, FeedbackError, LineItem, User } from './types'
