import { byteLength, jsonOf, MAX_BODY, pack, type Body } from '../shared/batch'
import { createEngine, type DropReason } from '../shared/engine'
import { withParameter, withSendTime } from '../shared/http'
import { KEEPALIVE_BUDGET } from '../shared/keepalive'
import { post, type Answer } from '../shared/post'
import type { Entry, Outbox } from './outbox'
import { serviceBody } from './service-body'
import { beacon } from './transport'
import type { TrackerOptions } from './types'

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

/** Why the page's own senders give events up: all but 'undelivered', which only a sender with a deadline has. */
export type PageDropReason = Exclude<DropReason, 'undelivered'>

/**
 * A request of the page: the events its body carries, the handed-over events whose ids it asks
 * about (`checks`), whether the page is going (`leaving`), and the keepalive bytes it holds.
 */
type PageRequest = Body<Entry> & { checks?: Entry[]; leaving?: boolean; held?: number }

/**
 * Moves events from the outbox to the collector, once each on a healthy wire, through the
 * engine every sender runs (shared/engine.ts): the outbox is its store, and this file adds what
 * only a page has.
 *
 * While the page is visible, bodies go by fetch so the answer can be read. When the page turns
 * hidden, what waits goes by sendBeacon, which survives the page. The browser cannot tell
 * whether a beacon arrived, so such events count as delivered but stay "handed", as do those of
 * requests still in flight when the page goes. At least CHECK_AFTER later, this page or the next
 * asks the collector which of their event ids it lacks (`?unconfirmed=`,
 * docs/reference/collector-protocol.md) and sends only those again. A collector that does not answer `missing` gets each
 * such event at most once, never twice.
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
  dropped: (entries: Entry[], reason: PageDropReason, detail?: string, said?: string) => void,
  allowed: () => boolean
) {
  const spec = settings.format == 'spec'
  const maxBytes = Math.min(settings.maxBatchBytes || MAX_BODY, MAX_BODY)
  let adoptedAt = 0

  /**
   * The URL of a request. To a collector: with the send time, `t_sent` (withSendTime in shared/http.ts), and the ids asked
   * about, if any (docs/reference/collector-protocol.md). To the service, which knows neither: with the key, where its own
   * feedback library puts it (a beacon sets no header); SPEC "Authentication" 4 wants it in the body too, as every envelope has.
   */
  const requestUrl = (checks?: Entry[]) => {
    const { endpoint } = settings
    const url = spec ? withParameter(endpoint, 'key=' + encodeURIComponent(settings.key)) : withSendTime(endpoint)
    return checks ? url + '&unconfirmed=' + encodeURIComponent(checks.map((entry) => entry.event.event_id).join()) : url
  }

  /**
   * The bodies of `waiting`, at most `most`: JSON arrays of many events, or the service's one each. An event too large for
   * any goes to `oversized`: none is queued (tracked events are checked when tracked), but what another page left may be.
   */
  const bodiesOf = (waiting: Entry[], oversized: (entry: Entry) => void, most?: number): PageRequest[] =>
    spec ? waiting.slice(0, most).map(serviceBody) : pack(waiting, maxBytes, oversized, most)

  const engine = createEngine<Entry, PageRequest>(outbox, {
    take(waiting, most, oversized) {
      const now = Date.now()
      const fresh = waiting.filter((entry) => !entry.handed)
      const checks = waiting.filter((entry) => entry.handed && now - entry.handed >= CHECK_AFTER).slice(0, MAX_CHECKS)
      // The service cannot be asked: what was handed over counts as delivered, as with a
      // collector that does not answer `missing`, so each such event arrives at most once.
      if (spec) outbox.remove(checks.splice(0))
      const requests = bodiesOf(fresh, oversized, most)
      // The ids ride with the first body, or with a body of no events that only asks.
      if (checks.length) (requests[0] ||= { body: '[]', entries: [], bytes: 2 }).checks = checks
      return requests
    },
    post(request): Promise<Answer> {
      const { bytes } = request
      // keepalive lets a request finish after the page is gone, within the shared budget.
      // While the page is visible it takes at most half, so that beacons find room when the
      // page goes; a body beyond that goes by ordinary fetch, which a visible page has time
      // to see through.
      const keepalive = engine.keepaliveInUse() + bytes <= (request.leaving ? KEEPALIVE_BUDGET : KEEPALIVE_BUDGET / 2)
      request.held = keepalive ? bytes : 0
      return post(requestUrl(request.checks), request.body, keepalive, !!request.checks)
    },
    answered({ checks = [] }, answer, outcome) {
      // Of the ids asked about, those the collector lacks wait again. No list (a collector
      // without the extension, or a refusal, which would come again at once and forever):
      // they count as delivered.
      const missing = outcome == 'delivered' && answer.missing
      const lost = (entry: Entry) => Array.isArray(missing) && missing.includes(entry.event.event_id)
      outbox.remove(checks.filter((entry) => !lost(entry)))
      outbox.mark(checks.filter(lost))
      if (!outbox.entries.length && Date.now() - adoptedAt > ADOPT_EVERY) adopt()
    },
    retry({ entries }, answer) {
      // Answered with an error, or offline: not stored, so back to waiting even if handed on
      // the way out. Otherwise no answer leaves handed ones handed, as a beacon's: a request
      // cancelled as the page went (Firefox cancels ordinary fetches at navigation) may still
      // have arrived, and a beacon sending it again would count it twice.
      if (answer.status || !navigator.onLine) outbox.mark(entries.filter((entry) => entry.handed))
    },
    most: MAX_IN_FLIGHT,
    interval: settings.flushInterval ?? 1000,
    batch: settings.maxBatchEvents || 50,
    // A handed-over event is due to be asked about once a beacon would have arrived.
    due: (entry) => entry.handed && entry.handed + CHECK_AFTER,
    allowed,
    drop: dropped
  })

  /**
   * The page turned hidden or is going, and may be gone any moment: everything waiting goes now, by beacon where the browser
   * takes it, the backoff notwithstanding. What requests still carry is handed over too: whether it arrives is asked later,
   * as for beacons. Should the page stay after all, their answers settle it first.
   */
  const sendLeaving = () => engine.leave(handOver)

  /** What waits, by beacon where the browser takes it, else by a request that may still get out (`start`); marked handed over. Returns how many events went by beacon. */
  function handOver(probing: boolean, oversized: (entry: Entry) => void, start: (request: PageRequest) => void): number {
    // The service is never asked what it lacks: a beacon into an outage would be lost for good,
    // and a request in flight to a failing service (the probe) is no delivery either.
    if (spec && probing) return 0
    const handed: Entry[] = []
    const waiting: Entry[] = []
    let beaconedEvents = 0
    for (const entry of outbox.entries) if (!entry.handed) (entry.sending ? handed : waiting).push(entry)
    // Those in flight already are handed over as they are.
    outbox.mark(handed, Date.now())
    for (const body of bodiesOf(waiting, oversized)) {
      const beaconed = beacon(requestUrl(), body.body)
      // Refused by the browser: for the service, it waits unsent, since handed over it would never be sent again.
      if (!beaconed && spec) continue
      // Marked before any request starts: a page's fetch wrapper may call flush() from inside
      // it, and must find these handed over, not waiting to be sent again.
      outbox.mark(body.entries, Date.now())
      if (beaconed) beaconedEvents += body.entries.length
      // Refused (over the budget, or no sendBeacon): a request may still get out before the page goes.
      else start({ ...body, leaving: true })
    }
    return beaconedEvents
  }

  /** Takes over what pages that are gone left unsent, and sends it. The outbox finds nothing while it may not use storage (consent, storage mode). */
  function adopt() {
    adoptedAt = Date.now()
    outbox.adopt().then((adopted) => {
      if (adopted) engine.send()
    })
  }

  // The engine's own face, with what only a page adds.
  return {
    ...engine,
    adopt,
    sendLeaving,
    /**
     * Whether an event alone, between the array's brackets, is too large for any request: refused when tracked, never queued.
     * A UTF-16 code unit takes at most 3 bytes in UTF-8, so most events are known to fit by their length alone, without
     * encoding them: an encoder's call is the dearest part of the count outside a browser (jsdom, for one).
     */
    isOversized(entry: Entry) {
      const json = jsonOf(entry)
      return json.length * 3 + 2 > maxBytes && byteLength(json) + 2 > maxBytes
    },
    /**
     * Something changed that lets events go now (back online, consent granted): the backoff is
     * forgotten, what other pages left is looked for, and what waits is sent.
     */
    wake() {
      adopt()
      engine.wake()
    },
    /**
     * Back from the back/forward cache: a request cut short by the cache may never answer, so
     * none still counts as in flight, and what they carried is unconfirmed.
     */
    resume() {
      engine.forget()
      engine.send()
    }
  }
}

export type Delivery = ReturnType<typeof createDelivery>
