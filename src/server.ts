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

function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header || '').split(';')) {
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
export function identityCookie(cookieHeader: string | undefined, options: IdentityCookieOptions = {}): { uid: string; setCookie: string } {
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
  /** Send once this many events are queued. Default 50. */
  maxBatchEvents?: number
  /** Milliseconds an event may wait for others. Default 1000. */
  flushInterval?: number
  /** Tries per batch before it is given up and reported. Default 6 (about a minute of backoff). */
  maxAttempts?: number
  /** Hears every batch that could not be delivered. */
  onError?: (error: Error) => void
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
  /** Sends what is queued; resolves once every batch was delivered or given up. */
  flush(): Promise<void>
  /** Flushes and stops the timer, for a clean shutdown. */
  close(): Promise<void>
}

const BODY_BYTES = 61440
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Sends events from a shop's backend (Node 18+, global fetch), with the browser's rules. */
export function createServerTracker(options: ServerTrackerOptions): ServerTracker {
  const { key, endpoint, maxBatchEvents = 50, flushInterval = 1000, maxAttempts = 6 } = options
  if (!key || !endpoint) throw feedbackError('init', key ? 'endpoint' : 'key', 'is required')
  let queue: Entry[] = []
  let timer: ReturnType<typeof setTimeout> | undefined
  const sending = new Set<Promise<void>>()

  const report = (error: Error) => (options.onError ? options.onError(error) : console.error(error.message))

  async function deliver(body: string, count: number) {
    for (let attempt = 1; ; attempt++) {
      let status = 0
      let retryAfter: string | null = null
      try {
        const response = await fetch(endpoint + (endpoint.includes('?') ? '&' : '?') + 't_sent=' + Date.now(), {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body
        })
        status = response.status
        retryAfter = response.headers.get('retry-after')
      } catch {
        // No answer: tried again below.
      }
      if (status > 199 && status < 300) return
      const final = (status > 399 && status < 500 && status != 408 && status != 429) || attempt >= maxAttempts
      if (final) return report(feedbackError(undefined, undefined, count + ' events dropped: the collector answered ' + (status || 'nothing') + ' after ' + attempt + ' tries'))
      const asked = Number(retryAfter) * 1000
      await wait(asked > 0 ? asked : 2 ** (attempt - 1) * 1000 * (0.5 + Math.random() / 2))
    }
  }

  function flush(): Promise<void> {
    clearTimeout(timer)
    timer = undefined
    const batch = queue
    queue = []
    for (const [body, entries] of pack(batch, BODY_BYTES, ({ event }) => report(feedbackError(event.event, undefined, 'too large for a request')))) {
      const delivery = deliver(body, entries.length).finally(() => sending.delete(delivery))
      sending.add(delivery)
    }
    return Promise.all(sending).then(() => {})
  }

  return {
    track(event, properties, user) {
      const checked = checkUser(event, user)
      for (const field of ['uid', 'sid', 'ip', 'ua'] as const) {
        if (!checked[field]) {
          const hint = field == 'ip' || field == 'ua' ? "the shopper's, as SPEC asks for calls not made from their browser" : "the id the shopper's browser had"
          throw feedbackError(event, 'user.' + field, 'is required on the server: ' + hint)
        }
      }
      queue.push({ event: envelope(event, validate(event, properties), key, checked as User) })
      if (queue.length >= maxBatchEvents) flush()
      else if (!timer) timer = setTimeout(flush, flushInterval)
    },
    flush,
    close: flush
  }
}

export type { EventName, EventProperties, FeedbackError, LineItem, User } from './types'
