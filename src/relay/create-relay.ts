import { nanoid } from 'nanoid'
import { attempt } from '../shared/attempt'
import { uidFromCookieHeader, uidSetCookie } from '../shared/uid-cookie'
import { clientAddress } from './client-address'
import { checkEnvelope, KEY_INVALID, KEY_MISSING } from './envelopes'
import { claimEvents, type Claims } from './claims'
import { deadLetters } from './dead-letter'
import { eventKey, ownerOf } from './dedupe'
import { dropNotices } from './drop-notices'
import { botSorter } from './bots'
import { asEnvelope, readEnvelopes } from './intake'
import { serverSenders, UNPROVEN_SERVER } from './server-senders'
import { memoryStore } from './memory-delivery-store'
import { relayMetrics, sinkTimer, timedStore, type Metrics } from './metrics'
import { SinkUnavailable } from './sinks'
import type { BatchReport, DeadLetter, Relay, RelayEvent, RelayOptions, RequestInfo } from './types'

const DAY = 864e5
// A request may ask about this many unconfirmed ids (the tracker asks about 50).
const MAX_UNCONFIRMED = 200
// The shoppers one request may ask for: its cookie's and its events' uids, a tracker's own being one or two.
const MAX_ASKERS = 4
// Per client address: a tracker's whole outbox (2,000 events) at once, then 10 events a second.
// A page answered 429 keeps its events and sends them after Retry-After: a shop behind one
// address with many shoppers (an office, a carrier's NAT) is slowed, never loses an event.
const RATE_LIMIT = { burst: 2000, perSecond: 10 }
// A batch whose events another request holds is asked to come back after this: that request's
// sink is running, and has answered by then in all likelihood.
const CLAIMED_RETRY_SECONDS = 2

// A string, '' included; a store written before owners answers true.
const arrived = (owner: unknown) => typeof owner == 'string' || owner === true

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } })
const failure = (message: string, more: object = {}) => ({ error: { message }, ...more })

// A transparent 1×1 GIF: the answer an image request of the service's feedback library loads.
const PIXEL = Uint8Array.from(atob('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7'), (char) => char.charCodeAt(0))

/** An image request's answer: the pixel for what was taken, the JSON error (which the image ignores, a reader of the logs does not) for the rest. */
function asImage(answer: Response): Response {
  if (answer.status != 200) return answer
  const headers = new Headers(answer.headers)
  headers.set('content-type', 'image/gif')
  headers.set('cache-control', 'no-store')
  return new Response(PIXEL, { status: 200, headers })
}

/** Who sent a request, and when by our clock: what each of its events is given. */
interface Sender {
  /** Whether the shop's own server sent it (server-senders.ts). */
  server: boolean
  ip: string | undefined
  ua: string | undefined
  receivedAt: number
  /** How far the sender's clock is behind ours, in milliseconds. */
  skew: number
}

/**
 * When the sender says it sent the request (`?t_sent=`), if that is a time, and the gap between
 * its clock and ours: the event happened at t_client plus that gap. A t_sent that is no time, or
 * more than a day from ours, corrects nothing.
 */
function clockOf(query: URLSearchParams, receivedAt: number): { sentAt: number | undefined; skew: number } {
  const sentAt = Number(query.get('t_sent'))
  if (!(sentAt > 0)) return { sentAt: undefined, skew: 0 }
  return { sentAt, skew: Math.abs(receivedAt - sentAt) <= DAY ? receivedAt - sentAt : 0 }
}

/**
 * The status of a batch whose events are settled. 503 while another request holds some of them,
 * its sink still running: the whole batch comes back later, when they are settled. 200 when any
 * was taken or known, or none was refused; else 401, 403 or 400, by what the refusals were.
 */
function answer(batch: BatchReport, result: Record<string, unknown>, held: boolean, headers: Record<string, string>): Response {
  if (held) return json(503, failure('some events are being stored by another request', result), { ...headers, 'retry-after': String(CLAIMED_RETRY_SECONDS) })
  if (batch.accepted.length || batch.bots.length || batch.duplicates.length || !batch.rejected.length) return json(200, result, headers)
  const errors = batch.rejected.map(({ error }) => error)
  if (errors.every((error) => error == KEY_MISSING)) return json(401, failure(KEY_MISSING, result), headers)
  // A batch that failed only on keys, with at least one key given but not ours, is forbidden.
  if (errors.every((error) => error == KEY_MISSING || error == KEY_INVALID)) return json(403, failure(KEY_INVALID, result), headers)
  return json(400, failure(errors[0], result), headers)
}

/** The key a refused envelope came with: its own, else the request's; '' for none. */
const keyOf = (envelope: unknown, key: string | null): string => {
  const own = envelope && typeof envelope == 'object' ? (envelope as Record<string, unknown>).key : undefined
  return typeof own == 'string' && own ? own : key || ''
}

/**
 * Counts what became of a batch's envelopes, and hands its refused ones to the dead-letter
 * sink. Only for a batch the page is answered for: one answered 503 comes again, and is counted then.
 */
function settled(batch: BatchReport, metrics: Metrics, dead: (letters: DeadLetter[]) => void, key: string | null, refusedAt: number) {
  const bots = batch.bots.length
  metrics.events('accepted', batch.accepted.length - batch.accepted.filter((event) => event.bot).length)
  metrics.events('duplicate', batch.duplicates.length)
  metrics.events('rejected', batch.rejected.length)
  metrics.events('bot', bots)
  dead(batch.rejected.map(({ error, envelope }) => ({ error, key: keyOf(envelope, key), refused_at: refusedAt, envelope })))
}

/** The options without which there is no relay: a shop's mistake, told at once. */
function checkRequired({ keys, sink }: RelayOptions) {
  if (!Array.isArray(keys) || !keys.length) throw new TypeError('discovery-feedback: relay: options.keys must list the API keys it takes')
  if (typeof sink != 'function') throw new TypeError('discovery-feedback: relay: options.sink is required')
}

/**
 * Creates a relay: the collector protocol (docs/reference/collector-protocol.md) on Web standards, for a
 * shop to run on its own domain in front of the service. For each batch it checks the keys and
 * the rules, fills `user.ip` from the connection (through the proxies the shop trusts) and
 * `user.ua` from the request, corrects the device clock by `?t_sent=`, answers `?unconfirmed=`
 * from its store, renews the uid cookie from the server, and hands the accepted events to its
 * sink: 2xx only once the sink has them, 503 with Retry-After when it fails, so the browser,
 * whose outbox keeps them, sends them again. Each event id reaches the sink once, across every
 * instance that shares the store (docs/guide/relay.md says where that can fail).
 */
export function createRelay(options: RelayOptions): Relay {
  const { keys, sink, origins, maxBodyBytes = 256 * 1024, claimMs = 30000, onBatch, rateLimit = RATE_LIMIT, bots = 'drop' } = options
  checkRequired(options)
  const accepted = new Set(keys)
  const addresses = clientAddress(options)
  const fromServer = serverSenders(options.serverSecrets)
  const cookie = options.cookie === false ? undefined : options.cookie || {}
  const metrics = relayMetrics(sink)
  const store = timedStore(options.store || memoryStore(), metrics)
  const sortBots = botSorter(bots)
  // A failing handler must not turn one fault into two.
  const report = (error: unknown) => attempt(() => options.onError?.(error as Error))
  // What the relay drops is said without an onError too: a missing event must leave a trace a person reads.
  const notice = dropNotices((error) => attempt(() => (options.onError ? options.onError(error) : console.warn(error.message))))
  const dead = deadLetters(options.deadLetter, metrics, report)

  /** CORS headers for a request's Origin: its own origin needs none; others only if listed. */
  const cors = (request: Request): Record<string, string> => {
    // '*' is the same answer for everyone, so it goes on every response, as the collector
    // protocol asks (docs/reference/collector-protocol.md, CORS).
    if (origins == '*') return { 'access-control-allow-origin': '*', 'access-control-expose-headers': 'Retry-After' }
    const origin = request.headers.get('origin')
    if (!origin || !origins) return {}
    return origins.includes(origin) ? { 'access-control-allow-origin': origin, 'access-control-expose-headers': 'Retry-After', vary: 'Origin' } : {}
  }

  /**
   * The uid cookie renewed from the server, so Safari does not cap it at 7 days
   * (docs/reference/privacy.md, "Safari's 7-day cookie cap"). Only a cookie the request carried
   * is renewed: the tracker that wrote it had consent to store it, and a tracker that keeps its
   * ids in memory, or just deleted them (logout, consent withdrawn), sends none.
   */
  const setCookie = (request: Request): Record<string, string> => {
    const uid = uidFromCookieHeader(request.headers.get('cookie'))
    if (!cookie || !uid) return {}
    // Secure where the shopper's connection is https, also when a proxy in front ended TLS (a
    // forged header would only make the shopper's own browser refuse the cookie).
    const secure = cookie.secure ?? (new URL(request.url).protocol == 'https:' || request.headers.get('x-forwarded-proto') == 'https')
    return { 'set-cookie': uidSetCookie(uid, { domain: cookie.domain, secure, days: cookie.days }) }
  }

  /**
   * The shoppers a request speaks for, by their owner digests: the uid cookie it carried (a
   * relay on the shop's own domain gets it) and the uids of its events; the first few, since
   * each is a store read for every id asked about, and a tracker's request speaks for one.
   */
  const askers = (request: Request, events: RelayEvent[]) => {
    const uid = uidFromCookieHeader(request.headers.get('cookie'))
    return [...new Set([...(uid ? [uid] : []), ...events.map((event) => event.user.uid)])].slice(0, MAX_ASKERS).map(ownerOf)
  }

  /**
   * docs/reference/collector-protocol.md: of the event ids a tracker handed over unconfirmed, those it
   * must send again. Events are remembered per shopper (dedupe.ts), so only an id stored for one
   * of the asking shoppers counts as arrived: of anyone else's, the answer is "missing" whether it
   * arrived or not, so that nobody learns whether another shopper's order was placed (a resend is
   * a duplicate, and stored once).
   */
  async function unconfirmedOf(asked: string[], owners: string[]): Promise<string[]> {
    if (!asked.length || !owners.length) return asked
    // The question names no key: each id is looked up under every key the relay takes, for every asker.
    const perId = keys.length * owners.length
    const found = await store.lookup(asked.flatMap((id) => keys.flatMap((key) => owners.map((owner) => eventKey(key, owner, id)))))
    return asked.filter((_, index) => !found.slice(index * perId, (index + 1) * perId).some(arrived))
  }

  /**
   * Seconds a page's address must wait before this request is taken, or 0. Each event costs a
   * token, and so does each 50 ids asked about (a question is store reads too); a request costs
   * one at least, so that empty ones are counted as well.
   */
  async function waitSeconds(client: string | undefined, envelopes: number, query: URLSearchParams): Promise<number> {
    if (!rateLimit || !store.take || !client) return 0
    const question = query.get('unconfirmed')
    const asked = question ? question.split(',').length : 0
    const waitMs = await store.take(client, Math.max(1, envelopes) + Math.ceil(asked / 50), rateLimit)
    return waitMs > 0 ? Math.max(1, Math.ceil(waitMs / 1000)) : 0
  }

  /**
   * The events of a request's envelopes that pass the keys and the rules, each with its user's
   * ip and ua as SPEC wants them and its time on our clock; the others go to the batch's report.
   */
  function acceptEnvelopes(intake: { envelopes: unknown[]; key: string | null }, sender: Sender, batch: BatchReport): RelayEvent[] {
    const events: RelayEvent[] = []
    intake.envelopes.forEach((sent, index) => {
      const { envelope, filled } = asEnvelope(sent, intake.key)
      const checked = checkEnvelope(envelope, accepted)
      if ('error' in checked) return batch.rejected.push({ index, error: checked.error, envelope: sent })
      if (filled) batch.variantsFilled++
      const event = checked.event
      // SPEC "User object": ip and ua default to those of the request, and only the shop's own
      // server senders may give others (server-senders.ts). A given ip is under the same privacy setting.
      const givenIp = sender.server ? addresses.allowed(event.user.ip) : undefined
      const givenUa = sender.server ? event.user.ua : undefined
      if (givenIp || sender.ip) event.user.ip = givenIp || sender.ip
      else delete event.user.ip
      if (givenUa || sender.ua) event.user.ua = givenUa || sender.ua
      else delete event.user.ua
      events.push({ ...event, received_at: sender.receivedAt, t_corrected: event.t_client + sender.skew })
    })
    return events
  }

  /**
   * Hands the fresh events to the sink. When it fails, what it got through counts as delivered
   * and the rest is let go for the resend; the answer is then 503 with Retry-After.
   */
  async function deliver(claims: Claims, headers: Record<string, string>): Promise<Response | undefined> {
    const fresh = claims.fresh
    if (!fresh.length) return
    const timer = sinkTimer(metrics)
    try {
      await sink(fresh)
      timer(true)
    } catch (error) {
      timer(false)
      metrics.unavailable('sink')
      // Known by its object, or by its event id where a sink reports copies.
      const through = new Set<unknown>(error instanceof SinkUnavailable ? error.delivered.flatMap((event) => [event, event.event_id].filter(Boolean)) : [])
      const got = (event: RelayEvent) => through.has(event) || (!!event.event_id && through.has(event.event_id))
      await claims.delivered(fresh.filter(got)).catch(report)
      await claims.release(fresh.filter((event) => !got(event))).catch(report)
      report(error)
      const wait = error instanceof SinkUnavailable ? Math.ceil(error.retryAfterMs / 1000) : CLAIMED_RETRY_SECONDS
      return json(503, failure('the sink is unavailable'), { ...headers, 'retry-after': String(Math.max(1, wait)) })
    }
    // Delivered: the sink has them, whatever the store says next. A store that fails here is
    // a window docs/guide/relay.md names ("What each failure costs"): the ids are not marked, and
    // a resend would reach the sink again.
    await claims.delivered(fresh).catch(report)
  }

  async function handleBatch(request: Request, info: RequestInfo | undefined, headers: Record<string, string>): Promise<Response> {
    const sender = fromServer(request)
    // A server sender the relay cannot believe is told so, and counts nothing as sent: judged as
    // a page, its agent (Node's, a script's) would make a bot of it, and its events vanish.
    if (sender == 'unproven') {
      notice('unproven', 1, UNPROVEN_SERVER)
      return json(401, failure(UNPROVEN_SERVER), headers)
    }
    const server = sender != 'page'
    const intake = await readEnvelopes(request, maxBodyBytes)
    if ('status' in intake) return json(intake.status, failure(intake.message), headers)

    const receivedAt = Date.now()
    const query = new URL(request.url).searchParams
    const { sentAt, skew } = clockOf(query, receivedAt)
    // A page's events count against its address's bucket; the shop's server sends for every shopper.
    const client = server ? undefined : addresses.client(request.headers, info?.remoteAddress)
    const seconds = await waitSeconds(client, intake.envelopes.length, query)
    if (seconds) return json(429, failure('too many events from this address: come back in ' + seconds + ' s'), { ...headers, 'retry-after': String(seconds) })

    const batch: BatchReport = { accepted: [], duplicates: [], rejected: [], bots: [], variantsFilled: 0, sentAt }
    const ip = addresses.of(request.headers, info?.remoteAddress)
    const ua = request.headers.get('user-agent') || undefined
    const events = acceptEnvelopes(intake, { server, ip, ua, receivedAt, skew }, batch)

    const claims = await claimEvents(store, sortBots(events, batch), server, nanoid(), claimMs)
    batch.duplicates.push(...claims.duplicates)
    const unavailable = await deliver(claims, headers)
    if (unavailable) return unavailable
    batch.accepted = claims.fresh
    // Those sortBots dropped, then those kept: purchases, or every one with bots: 'keep'.
    const droppedBots = batch.bots.length
    batch.bots.push(...claims.fresh.filter((event) => event.bot))

    const result: Record<string, unknown> = {
      // A bot's dropped events are answered as taken: told otherwise, it would send them again.
      accepted: claims.fresh.length + droppedBots,
      duplicates: batch.duplicates.length,
      rejected: batch.rejected.map(({ index, error }) => ({ index, error }))
    }
    // docs/reference/collector-protocol.md: of the ids the tracker handed over unconfirmed, those that never arrived.
    const unconfirmed = query.get('unconfirmed')
    if (unconfirmed != null) {
      const asked = unconfirmed.split(',').filter(Boolean).slice(0, MAX_UNCONFIRMED)
      result.missing = await unconfirmedOf(asked, askers(request, events))
    }
    try {
      onBatch?.(batch)
    } catch (error) {
      report(error)
    }
    if (claims.held) metrics.unavailable('held')
    else {
      settled(batch, metrics, dead, intake.key, receivedAt)
      notice('bot', droppedBots)
      notice('refused', batch.rejected.length, batch.rejected[0]?.error)
    }
    return answer(batch, result, claims.held, { ...headers, ...setCookie(request) })
  }

  async function respond(request: Request, info: RequestInfo | undefined): Promise<Response> {
    const headers = cors(request)
    try {
      if (request.method == 'OPTIONS') {
        return new Response(null, {
          status: 204,
          headers: {
            ...headers,
            'access-control-allow-methods': 'POST, OPTIONS',
            'access-control-allow-headers': request.headers.get('access-control-request-headers') || 'content-type',
            'access-control-max-age': '86400'
          }
        })
      }
      // GET is the feedback library's image request, its event in the query.
      if (request.method == 'GET') return asImage(await handleBatch(request, info, headers))
      if (request.method != 'POST') return json(405, failure('use POST, or GET with the event in the query'), { ...headers, allow: 'GET, POST, OPTIONS' })
      return await handleBatch(request, info, headers)
    } catch (error) {
      // The store failed (Redis down): the browser keeps the events and tries again.
      report(error)
      metrics.unavailable('store')
      return json(503, failure('the relay cannot store events now'), { ...headers, 'retry-after': String(CLAIMED_RETRY_SECONDS) })
    }
  }

  return {
    async fetch(request, info) {
      const response = await respond(request, info)
      metrics.request(response.status)
      return response
    },
    metrics: () => metrics.text()
  }
}
