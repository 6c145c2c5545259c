import { pack, tooLarge, type Body } from '../shared/batch'
import { createBackoff, outcomeOf, withSendTime } from '../shared/http'
import type { DropReason, Entry, Outbox } from './outbox'
import { post, type Answer } from '../shared/post'
import { serviceBody } from './service-body'
import { beacon } from './transport'
import type { TrackerOptions } from './types'

// The browser lets a page have 64 KiB of keepalive requests in flight (Fetch standard,
// "keepalive"), shared with every other script; we never take more than that ourselves.
const BUDGET = 65536
// A body of 60 KiB at most leaves room in that budget for request overhead.
const MAX_BODY = 61440
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

/** A body of no events, for a request that only asks which handed-over events the collector lacks. */
const questionOnly = (): Body<Entry> => ({ body: '[]', entries: [], bytes: 2 })

export type Reason = DropReason | 'too_large' | 'rejected'

/**
 * Moves events from the outbox to the collector, once each on a healthy wire.
 *
 * A batch leaves when `maxEvents` wait to be sent, or when the oldest of them has waited
 * `interval`; an answer sends on only a batch that is due. While the page is visible, bodies
 * go by fetch so the answer can be read, at most MAX_IN_FLIGHT at a time, and one at a time
 * after a failure until a request succeeds again (shared/http.ts). 2xx removes the events; a
 * 5xx, 408, 429 or no answer keeps them and tries again after the backoff; any other 4xx can
 * never succeed, so that batch is dropped and reported.
 *
 * When the page turns hidden, what waits goes by sendBeacon, which survives the page. The
 * browser cannot tell whether a beacon arrived, so such events count as delivered but stay
 * "handed", as do those of requests still in flight when the page goes. At least CHECK_AFTER
 * later, this page or the next asks the collector which of their event ids it lacks
 * (`?unconfirmed=`, README "Collector protocol") and sends only those again. A collector that
 * does not answer `missing` gets each such event at most once, never twice.
 *
 * `format: 'spec'` sends to the service itself, which takes one SPEC envelope per request and
 * answers no question: each body is one event (service-body.ts), the key goes in the query, and
 * what was handed over counts as delivered without asking. So that a beacon is not lost for good
 * in an outage, nothing is beaconed while the service is failing, nor what the browser refuses:
 * it waits in the outbox, for this page or the next.
 */
export function createDelivery(
  settings: TrackerOptions,
  outbox: Outbox,
  dropped: (entries: Entry[], reason: Reason, detail?: string) => void,
  counts: { sent: number; retried: number },
  allowed: () => boolean
) {
  const endpoint = settings.endpoint
  const spec = settings.format == 'spec'
  const maxBytes = Math.min(settings.maxBatchBytes || MAX_BODY, MAX_BODY)
  const maxEvents = settings.maxBatchEvents || 50
  const interval = settings.flushInterval ?? 1000
  // A page starts out trusting the collector, unlike the server sender: its first seconds race
  // the shopper leaving, and a burst tracked just before that gets out only if its bodies are
  // already on their way (measured in WebKit: 358 of 1,000 events out before leaving when a new
  // page probed first, 1,000 of 1,000 without).
  const backoff = createBackoff({ probeFirst: false })
  // Requests in flight, each with the keepalive bytes it holds (none for an ordinary fetch).
  const inFlight = new Map<object, number>()
  // A loop, not reduce(): Prototype.js 1.6 replaces Array.prototype.reduce with a function that
  // ignores its arguments, and keepalive would never be used on such pages.
  const keepaliveBytes = () => {
    let sum = 0
    for (const bytes of inFlight.values()) sum += bytes
    return sum
  }
  let timer: ReturnType<typeof setTimeout> | undefined
  let due = Infinity
  let adoptedAt = 0
  // Set by flush(): every waiting event goes now, a body after each answer, until none waits.
  let urgent = false
  // flush() calls waiting for that to end: nothing left to send and no request in flight, or a
  // failure that the backoff now waits out.
  const flushing: (() => void)[] = []

  const endUrgent = () => {
    urgent = false
    flushing.splice(0).forEach((resolve) => resolve())
  }

  /**
   * The URL of a request. To a collector: with the send time, `t_sent`, as the server sender's
   * (withSendTime in shared/http.ts), and, if any, the ids asked about (README "Collector
   * protocol"). To the service, which knows neither: with the key, where its own feedback
   * library puts it (a beacon can set no header); SPEC "Authentication" 4 wants it in the body
   * too, where every envelope has it.
   */
  const target = (checks: Entry[]) => {
    const url = spec ? endpoint + (endpoint.includes('?') ? '&' : '?') + 'key=' + encodeURIComponent(settings.key) : withSendTime(endpoint, Date.now())
    if (!checks.length) return url
    return url + '&unconfirmed=' + encodeURIComponent(checks.map((entry) => entry.event.event_id).join())
  }

  const saturated = () => inFlight.size >= backoff.slots(MAX_IN_FLIGHT)

  const clearTimer = () => {
    clearTimeout(timer)
    due = Infinity
  }

  /** Sends at `at` (ms since epoch), or sooner if a send is already due sooner; never before the backoff allows. */
  const schedule = (at: number) => {
    at = Math.max(at, backoff.resumeAt())
    if (at < due) {
      clearTimeout(timer)
      due = at
      timer = setTimeout(sendVisible, at - Date.now())
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
      if (entry.handed) {
        at = Math.min(at, entry.handed + CHECK_AFTER)
      } else {
        fresh++
        // t_client is when it was tracked; a clock set back meanwhile must not hold it longer.
        at = Math.min(at, Math.min(entry.event.t_client, now) + interval)
      }
    }
    if (!saturated()) schedule(fresh >= maxEvents ? 0 : at)
  }

  const dropTooLarge = (entry: Entry) => {
    outbox.remove([entry])
    dropped([entry], 'too_large')
  }

  /** The bodies of `waiting`, at most `most`: JSON arrays of many events, or the service's one each. */
  const bodiesOf = (waiting: Entry[], most?: number) => (spec ? waiting.slice(0, most).map(serviceBody) : pack(waiting, maxBytes, dropTooLarge, most))

  /** 2xx: the events are stored; of the ids asked about, those the collector lacks wait again. */
  const delivered = (entries: Entry[], checks: Entry[], missing: unknown) => {
    counts.sent += entries.length
    outbox.remove(entries)
    // No list: a collector without the extension. Handed events then count as delivered.
    const lost = Array.isArray(missing) ? checks.filter((entry) => missing.includes(entry.event.event_id)) : []
    outbox.remove(checks.filter((entry) => !lost.includes(entry)))
    outbox.mark(lost)
    if (!outbox.entries.length && Date.now() - adoptedAt > ADOPT_EVERY) adopt()
  }

  /** 5xx, 408, 429 or no answer: the events wait out the backoff. */
  const failed = (entries: Entry[], answer: Answer, step: number) => {
    counts.retried += entries.length
    backoff.failed(step, answer.retryAfter)
    // Answered with an error, or offline: not stored, so back to waiting even if handed on the
    // way out. Otherwise no answer leaves handed ones handed, as a beacon's: a request
    // cancelled as the page went (Firefox cancels ordinary fetches at navigation) may still
    // have arrived, and a beacon sending it again would count it twice.
    if (answer.status || !navigator.onLine) outbox.mark(entries.filter((entry) => entry.handed))
    endUrgent()
    schedule(backoff.resumeAt())
  }

  /** POSTs one body by fetch, with the ids in `checks` asked about, and settles its events by the answer. */
  const deliver = ({ body, entries, bytes }: Body<Entry>, checks: Entry[], leaving: boolean) => {
    // keepalive lets a request finish after the page is gone, within the shared budget. While
    // the page is visible it takes at most half, so that beacons find room when the page goes;
    // a body beyond that goes by ordinary fetch, which a visible page has time to see through.
    const keepalive = keepaliveBytes() + bytes <= (leaving ? BUDGET : BUDGET / 2)
    const request = {}
    inFlight.set(request, keepalive ? bytes : 0)
    const carried = entries.concat(checks)
    carried.forEach((entry) => (entry.sending = true))
    const step = backoff.step()
    post(target(checks), body, keepalive).then((answer) => {
      // Forgotten when the page came back from the back/forward cache (resume): what it
      // carried was handed over as the page went, and is asked about instead.
      if (!inFlight.delete(request)) return
      carried.forEach((entry) => (entry.sending = false))
      const outcome = outcomeOf(answer.status)
      if (outcome == 'retry') return failed(entries, answer, step)
      backoff.answered()
      if (outcome == 'delivered') {
        delivered(entries, checks, answer.missing)
      } else {
        // Refused: the events can never go. The ids asked about could not be answered, so they
        // count as delivered, as with a collector that does not answer `missing`; asked again,
        // the collector would refuse again, at once and forever.
        outbox.remove(entries.concat(checks))
        if (entries.length) dropped(entries, 'rejected', 'the collector answered ' + answer.status)
      }
      if (urgent) sendVisible()
      else plan()
    })
  }

  /**
   * The page is visible: sends what is due by fetch, as many bodies as there are free slots,
   * and asks about handed-over events old enough to have arrived (with the first body).
   */
  function sendVisible() {
    clearTimer()
    if (!allowed()) return endUrgent()
    // Every slot taken: the next answer sends on.
    if (saturated()) return
    if (Date.now() < backoff.resumeAt()) {
      // Backing off after a failure: a flush() ends here, and the backoff's timer sends later.
      endUrgent()
      return plan()
    }
    const now = Date.now()
    const waiting: Entry[] = []
    const checks: Entry[] = []
    for (const entry of outbox.entries) {
      if (entry.sending) continue
      if (!entry.handed) waiting.push(entry)
      else if (now - entry.handed >= CHECK_AFTER && checks.length < MAX_CHECKS) checks.push(entry)
    }
    // The service cannot be asked: what was handed over counts as delivered, as with a collector
    // that does not answer `missing`, so each such event arrives at most once.
    if (spec) outbox.remove(checks.splice(0))
    const bodies = bodiesOf(waiting, backoff.slots(MAX_IN_FLIGHT) - inFlight.size)
    if (!bodies.length && checks.length) bodies.push(questionOnly())
    // Nothing at all to send: a flush() ends once the requests in flight were answered too.
    if (!bodies.length && !inFlight.size) endUrgent()
    bodies.forEach((body, index) => deliver(body, index == 0 ? checks : [], false))
    plan()
  }

  /**
   * The page turned hidden or is going, and may be gone any moment: everything waiting goes
   * now, by beacon where the browser takes it, the backoff notwithstanding. What requests
   * still carry is handed over too: whether it arrives is asked later, as for beacons. Should
   * the page stay after all, their answers settle it first.
   */
  function sendLeaving() {
    clearTimer()
    if (!allowed()) return endUrgent()
    const now = Date.now()
    const handed: Entry[] = []
    const waiting: Entry[] = []
    // The service is never asked what it lacks: a beacon into an outage would be lost for good.
    // Failing, the backoff probes with one request at a time (shared/http.ts).
    const withheld = spec && backoff.slots(MAX_IN_FLIGHT) == 1
    for (const entry of outbox.entries) {
      // A request in flight to a failing service (the probe) is no delivery: it stays to be sent again.
      if (entry.sending && !entry.handed) {
        if (!withheld) handed.push(entry)
      } else if (!entry.sending && !entry.handed && !withheld) waiting.push(entry)
    }
    for (const body of bodiesOf(waiting)) {
      if (beacon(target([]), body.body)) counts.sent += body.entries.length
      // Refused by the browser: for the service, it waits unsent, since handed over it would never be sent again.
      else if (spec) continue
      // Refused (over the budget, or no sendBeacon): a request may still get out before the page goes.
      else deliver(body, [], true)
      handed.push(...body.entries)
    }
    outbox.mark(handed, now)
    // Everything was handed to the browser: nothing is left for a flush() to wait for.
    endUrgent()
  }

  /**
   * Takes over what pages that are gone left unsent, and sends it. The outbox finds nothing
   * while it may not use storage (consent, storage mode).
   */
  function adopt() {
    adoptedAt = Date.now()
    outbox.adopt().then((adopted) => {
      if (adopted) sendVisible()
    })
  }

  return {
    adopt,
    sendVisible,
    sendLeaving,
    /** Whether an event alone is too large for any request: refused when tracked, never queued. */
    tooLarge: (entry: Entry) => tooLarge(entry, maxBytes),
    /**
     * An event was queued: a full batch leaves now, anything less after `interval`. The new
     * event is due last, so the queue is walked only when it may hold a full batch.
     */
    queued() {
      if (outbox.entries.length < maxEvents) schedule(Date.now() + interval)
      else plan()
    },
    /**
     * Sends every waiting event now, as many requests at a time as the collector's health
     * allows; resolves once none waits and none is in flight, or once a request failed.
     */
    flush(): Promise<void> {
      urgent = true
      const flushed = new Promise<void>((resolve) => flushing.push(resolve))
      sendVisible()
      return flushed
    },
    /**
     * Something changed that lets events go now (back online, consent granted): the backoff is
     * forgotten, what other pages left is looked for, and what waits is sent.
     */
    wake() {
      backoff.reset()
      adopt()
      sendVisible()
    },
    /**
     * Back from the back/forward cache: a request cut short by the cache may never answer, so
     * none still counts as in flight (the outbox's resume() made what they carried unconfirmed).
     */
    resume() {
      inFlight.clear()
      sendVisible()
    },
    stop: () => clearTimeout(timer)
  }
}

export type Delivery = ReturnType<typeof createDelivery>
