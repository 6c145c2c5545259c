import { pack, tooLarge } from '../shared/batch'
import type { DropReason, Entry, Outbox } from './outbox'
import { beacon, post } from './transport'
import type { TrackerOptions } from './types'

// The browser lets a page have 64 KiB of keepalive requests in flight (Fetch standard,
// "keepalive"), shared with every other script; we never take more than that ourselves.
const BUDGET = 65536
// A body of 60 KiB at most leaves room in that budget for request overhead.
const MAX_BODY = 61440
const MAX_BACKOFF = 60000
// Requests in flight while the page is visible: the browser's connection limit per host over
// HTTP/1.1. More would only wait inside the browser; fewer lets batches fill meanwhile.
export const MAX_IN_FLIGHT = 6
// A beacon reaches the collector within seconds or not at all: only then is it worth asking.
export const CHECK_AFTER = 5000
// Event ids asked about in one request: a couple of kilobytes of query at most.
const MAX_CHECKS = 50
// Orphans of other pages (a tab that closed while its collector was unreachable) are looked
// for at start, and again at most this often once this page has nothing left to send.
const ADOPT_EVERY = 10000

export type Reason = DropReason | 'too_large' | 'rejected'

/**
 * Moves events from the outbox to the collector, once each on a healthy wire.
 *
 * A batch leaves when `maxEvents` wait to be sent, or when the oldest of them has waited
 * `interval`; an answer sends on only a batch that is due. While the page is visible, bodies
 * go by fetch so the answer can be read, at most MAX_IN_FLIGHT at a time, one at a time after a
 * failure until a request succeeds again: 2xx removes the
 * events; a 5xx, 408, 429 or no answer keeps them and tries again with exponential backoff
 * and jitter (or the collector's Retry-After); any other 4xx can never succeed, so that batch
 * is dropped and reported.
 *
 * When the page turns hidden, what waits goes by sendBeacon, which survives the page. The
 * browser cannot tell whether a beacon arrived, so such events count as delivered but stay
 * "handed", as do those of requests still in flight when the page goes. At least CHECK_AFTER
 * later, this page or the next asks the collector which of their event ids it lacks
 * (`?unconfirmed=`, README "Collector protocol") and sends only those again. A collector that
 * does not answer `missing` gets each such event at most once, never twice.
 */
export function createDelivery(
  settings: TrackerOptions,
  outbox: Outbox,
  dropped: (entries: Entry[], reason: Reason, detail?: string) => void,
  counts: { sent: number; retried: number },
  allowed: () => boolean
) {
  const endpoint = settings.endpoint
  const maxBytes = Math.min(settings.maxBatchBytes || MAX_BODY, MAX_BODY)
  const maxEvents = settings.maxBatchEvents || 50
  const interval = settings.flushInterval ?? 1000
  let requests = 0
  let keepaliveBytes = 0
  let failures = 0
  let retryAt = 0
  // Whether the collector's last answer was one that no retry follows (2xx, or a 4xx that
  // refuses the batch). After a failure, one request at a time probes the collector, so one
  // that struggles sees at most one request from this page per backoff step; once a probe
  // succeeds, up to MAX_IN_FLIGHT go at once again. A page starts out trusting the collector,
  // unlike the server sender: its first seconds race the shopper leaving, and a burst tracked
  // just before that gets out only if its bodies are already on their way (measured in WebKit:
  // 358 of 1,000 events out before leaving when a new page probed first, 1,000 of 1,000
  // without). Beacons as the page goes are never held back: there is no later for them.
  let healthy = true
  // Set by flush(): every waiting event goes now, a body after each answer, until none waits.
  let urgent = false
  // flush() calls waiting for that to end: nothing left to send and no request in flight, or a
  // failure that the backoff now waits out.
  let flushing: (() => void)[] = []
  const endUrgent = () => {
    urgent = false
    flushing.splice(0).forEach((resolve) => resolve())
  }
  let timer: ReturnType<typeof setTimeout> | undefined
  let due = Infinity
  let adoptedAt = 0

  // The send time lets a collector correct a device clock that is off: the event happened at
  // t_client + (its own receive time - t_sent). A query parameter keeps the body SPEC's.
  const base = endpoint + (endpoint.includes('?') ? '&' : '?') + 't_sent='
  const target = (checks: Entry[]) =>
    base +
    Date.now() +
    (checks.length ? '&unconfirmed=' + encodeURIComponent(checks.map((entry) => entry.event.event_id).join()) : '')

  const slots = () => (healthy ? MAX_IN_FLIGHT : 1)
  const saturated = () => requests >= slots()

  const schedule = (at: number) => {
    at = Math.max(at, retryAt)
    if (at < due) {
      clearTimeout(timer)
      due = at
      timer = setTimeout(() => send(false), at - Date.now())
    }
  }

  /**
   * When the next request is due: a full batch now, otherwise when the oldest waiting event
   * has waited `interval` or a handed one may be asked about. Nothing while every slot is
   * taken: the next answer plans again.
   */
  const plan = () => {
    const now = Date.now()
    let at = Infinity
    let fresh = 0
    for (const entry of outbox.entries) {
      if (entry.sending) continue
      if (entry.handed) at = Math.min(at, entry.handed + CHECK_AFTER)
      else {
        fresh++
        // t_client is when it was tracked; a clock set back meanwhile must not hold it longer.
        at = Math.min(at, Math.min(entry.event.t_client, now) + interval)
      }
    }
    if (!saturated()) schedule(fresh >= maxEvents ? 0 : at)
  }

  const backOff = (retryAfter?: string | null) => {
    const seconds = Number(retryAfter)
    const asked = retryAfter ? (isNaN(seconds) ? Date.parse(retryAfter) - Date.now() : seconds * 1000) : NaN
    failures++
    retryAt = Date.now() + (asked >= 0 ? asked : Math.min(1000 * 2 ** (failures - 1), MAX_BACKOFF) * (0.5 + Math.random() / 2))
  }

  const deliver = (body: string, entries: Entry[], bytes: number, checks: Entry[], leaving: boolean) => {
    // keepalive lets a request finish after the page is gone, within the shared budget. While
    // the page is visible it takes at most half, so that beacons find room when the page goes;
    // a body beyond that goes by ordinary fetch, which a visible page has time to see through.
    const keepalive = keepaliveBytes + bytes <= (leaving ? BUDGET : BUDGET / 2)
    if (keepalive) keepaliveBytes += bytes
    requests++
    const carried = entries.concat(checks)
    carried.forEach((entry) => (entry.sending = true))
    return post(target(checks), body, keepalive).then(([status, retryAfter, missing]) => {
      requests--
      if (keepalive) keepaliveBytes -= bytes
      carried.forEach((entry) => (entry.sending = false))
      if (status > 199 && status < 300) {
        failures = 0
        healthy = true
        counts.sent += entries.length
        outbox.remove(entries)
        // No list: a collector without the extension. Handed events then count as delivered.
        const lost = checks.filter((entry) => Array.isArray(missing) && missing.includes(entry.event.event_id))
        outbox.remove(checks.filter((entry) => !lost.includes(entry)))
        outbox.mark(lost)
        if (!outbox.entries.length && Date.now() - adoptedAt > ADOPT_EVERY) adopt()
      } else if (status > 399 && status < 500 && status != 408 && status != 429) {
        healthy = true
        outbox.remove(entries)
        dropped(entries, 'rejected', 'the collector answered ' + status)
      } else {
        healthy = false
        counts.retried += entries.length
        backOff(retryAfter)
        // Answered with an error, or offline: not stored, so back to waiting even if handed on
        // the way out. Otherwise no answer leaves handed ones handed, as a beacon's: a request
        // cancelled as the page went (Firefox cancels ordinary fetches at navigation) may
        // still have arrived, and a beacon sending it again would count it twice.
        if (status || !navigator.onLine) outbox.mark(entries.filter((entry) => entry.handed))
        endUrgent()
        return schedule(retryAt)
      }
      if (urgent) return send(false)
      plan()
    })
  }

  /** Sends what is due. `leaving`: the page turned hidden or is going, and may be gone any moment. */
  function send(leaving: boolean): Promise<void> {
    clearTimeout(timer)
    due = Infinity
    // Without consent nothing may go: a flush() has nothing to wait for.
    if (!allowed()) endUrgent()
    // Every slot taken: the next answer sends on.
    if (!allowed() || (!leaving && saturated())) return Promise.resolve()
    if (!leaving && Date.now() < retryAt) {
      // Backing off after a failure: a flush() ends here, and the backoff's timer sends later.
      endUrgent()
      plan()
      return Promise.resolve()
    }
    const now = Date.now()
    const waiting: Entry[] = []
    const checks: Entry[] = []
    // Leaving, what requests still carry is handed over too: whether it arrives is asked later,
    // as for beacons. Should the page stay after all, their answers settle it first.
    const handed: Entry[] = []
    for (const entry of outbox.entries) {
      if (entry.sending) leaving && !entry.handed && handed.push(entry)
      else if (!entry.handed) waiting.push(entry)
      else if (!leaving && now - entry.handed >= CHECK_AFTER && checks.length < MAX_CHECKS) checks.push(entry)
    }
    const bodies = pack(
      waiting,
      maxBytes,
      (entry) => {
        outbox.remove([entry])
        dropped([entry], 'too_large')
      },
      leaving ? Infinity : slots() - requests
    )
    const answers: Promise<void>[] = []
    if (!bodies.length) {
      // Nothing to send but ids to ask about: a body of no events carries the question.
      if (checks.length) bodies.push(['[]', [], 2])
      // Nothing at all: a flush() ends once the requests in flight were answered too.
      else if (!requests) endUrgent()
    }
    for (const [body, entries, bytes] of bodies) {
      if (leaving && beacon(target([]), body)) counts.sent += entries.length
      // By fetch while visible (checks are asked only then, with the first body); leaving, when the
      // beacon was refused (over the budget, or no sendBeacon): a request may still get out before the page goes.
      else answers.push(deliver(body, entries, bytes, answers.length ? [] : checks, leaving))
      if (leaving) handed.push(...entries)
    }
    if (leaving) {
      outbox.mark(handed, now)
      // Everything was handed to the browser: nothing is left for a flush() to wait for.
      endUrgent()
    } else plan()
    return Promise.all(answers) as Promise<unknown> as Promise<void>
  }

  /**
   * Takes over what pages that are gone left unsent, and sends it. The outbox finds nothing
   * while it may not use storage (consent, storage mode).
   */
  function adopt() {
    adoptedAt = Date.now()
    outbox.adopt().then((adopted) => {
      if (adopted) send(false)
    })
  }

  return {
    adopt,
    /** Whether an event alone is too large for any request: refused when tracked, never queued. */
    tooLarge: (entry: Entry) => tooLarge(entry, maxBytes),
    /**
     * An event was queued: a full batch leaves now, anything less after `interval`. The new
     * event is due last, so the queue is walked only when it may hold a full batch.
     */
    queued: () => (outbox.entries.length < maxEvents ? schedule(Date.now() + interval) : plan()),
    send,
    /**
     * Sends every waiting event now, as many requests at a time as the collector's health
     * allows; resolves once none waits and none is in flight, or once a request failed.
     */
    flush() {
      urgent = true
      const flushed = new Promise<void>((resolve) => flushing.push(resolve))
      send(false)
      return flushed
    },
    /**
     * Something changed that lets events go now (back online, consent granted): the backoff is
     * forgotten, what other pages left is looked for, and what waits is sent.
     */
    wake() {
      failures = retryAt = 0
      adopt()
      return send(false)
    },
    stop: () => clearTimeout(timer)
  }
}

export type Delivery = ReturnType<typeof createDelivery>
