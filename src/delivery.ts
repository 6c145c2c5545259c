import { pack } from './batch'
import type { DropReason, Entry, Outbox } from './outbox'
import { beacon, post } from './transport'

// The browser lets a page have 64 KiB of keepalive requests in flight (Fetch standard,
// "keepalive"), shared with every other script; we never take more than that ourselves.
const BUDGET = 65536
const MAX_BACKOFF = 60000

export type Reason = DropReason | 'too_large' | 'rejected'

/**
 * Moves events from the outbox to the collector, and removes them only once handed over:
 * a 2xx answer, or a beacon the browser accepted while the page was going away.
 *
 * While the page is visible, bodies go by fetch so the answer can be read: a 5xx, 408, 429
 * or no answer keeps the events and tries again with exponential backoff and jitter (or the
 * collector's Retry-After); any other 4xx can never succeed, so that batch is dropped and
 * reported. When the page turns hidden, sendBeacon goes first, as it survives the page.
 */
export function createDelivery(
  endpoint: string,
  outbox: Outbox,
  maxBytes: number,
  dropped: (entries: Entry[], reason: Reason, detail?: string) => void,
  counts: { sent: number; retried: number },
  allowed: () => boolean
) {
  let inFlight = 0
  let failures = 0
  let retryAt = 0
  let retryTimer: ReturnType<typeof setTimeout> | undefined

  // The send time lets a collector correct a device clock that is off: the event happened at
  // t_client + (its own receive time - t_sent). A query parameter keeps the body SPEC's.
  const target = () => endpoint + (endpoint.includes('?') ? '&' : '?') + 't_sent=' + Date.now()

  const backOff = (retryAfter: string | null) => {
    const seconds = Number(retryAfter)
    const asked = retryAfter ? (isNaN(seconds) ? Date.parse(retryAfter) - Date.now() : seconds * 1000) : NaN
    const delay = asked >= 0 ? asked : Math.min(1000 * 2 ** failures, MAX_BACKOFF) * (0.5 + Math.random() / 2)
    failures++
    retryAt = Date.now() + delay
    clearTimeout(retryTimer)
    // Timers may fire a millisecond before Date.now() reaches retryAt: the timer itself ends the wait.
    retryTimer = setTimeout(() => {
      retryAt = 0
      send(false)
    }, delay)
  }

  const deliver = (body: string, entries: Entry[], bytes: number) => {
    // keepalive lets a request finish after the page is gone, within the shared budget; a
    // burst beyond it goes by ordinary fetch, which a visible page has time to see through.
    const keepalive = inFlight + bytes <= BUDGET
    if (keepalive) inFlight += bytes
    entries.forEach((entry) => (entry.sending = true))
    return post(target(), body, keepalive).then(({ status, retryAfter }) => {
      if (keepalive) inFlight -= bytes
      entries.forEach((entry) => (entry.sending = false))
      if (status > 199 && status < 300) {
        failures = 0
        counts.sent += entries.length
        outbox.remove(entries)
      } else if (status > 399 && status < 500 && status != 408 && status != 429) {
        outbox.remove(entries)
        dropped(entries, 'rejected', 'the collector answered ' + status)
      } else {
        counts.retried += entries.length
        backOff(retryAfter)
      }
      return send(false)
    })
  }

  /** Sends what waits. `leaving`: the page turned hidden and may be gone any moment. */
  function send(leaving: boolean): Promise<void> {
    if (!allowed() || (!leaving && Date.now() < retryAt)) return Promise.resolve()
    const waiting = outbox.entries.filter((entry) => !entry.sending && !entry.beaconed)
    const requests: Promise<void>[] = []
    for (const [body, entries, bytes] of pack(waiting, maxBytes, (entry) => {
      outbox.remove([entry])
      dropped([entry], 'too_large')
    })) {
      if (leaving && beacon(target(), body)) {
        // Queued by the browser, not confirmed: kept, so that a later page of this site sends
        // it again should the collector have been down. Its event_id makes that harmless.
        entries.forEach((entry) => (entry.beaconed = true))
        counts.sent += entries.length
        outbox.changed()
      } else if (!leaving || inFlight + bytes <= BUDGET) {
        requests.push(deliver(body, entries, bytes))
      }
    }
    return Promise.all(requests).then(() => {})
  }

  return {
    send,
    /** Back online: try at once instead of waiting out the backoff. */
    retryNow() {
      failures = retryAt = 0
      return send(false)
    },
    stop: () => clearTimeout(retryTimer)
  }
}
