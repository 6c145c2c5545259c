import { nanoid } from 'nanoid'
import { attempt } from '../shared/attempt'
import { uidFromCookieHeader, uidSetCookie } from '../shared/uid-cookie'
import { clientAddress } from './client-address'
import { checkEnvelope, KEY_INVALID, KEY_MISSING } from './envelopes'
import { claimEvents } from './claims'
import { ownerOf, scopedId } from './dedupe'
import { asEnvelope, readEnvelopes } from './intake'
import { serverSenders } from './server-senders'
import { memoryStore } from './memory-store'
import { SinkUnavailable } from './sinks'
import type { BatchReport, Relay, RelayEvent, RelayOptions, RequestInfo } from './types'

const DAY = 864e5
// A request may ask about this many unconfirmed ids (the tracker asks about 50).
const MAX_UNCONFIRMED = 200
// Per client address: a tracker's whole outbox (2,000 events) at once, then 10 events a second.
// A page answered 429 keeps its events and sends them after Retry-After: a shop behind one
// address with many shoppers (an office, a carrier's NAT) is slowed, never loses an event.
const RATE_LIMIT = { burst: 2000, perSecond: 10 }
// A batch whose events another request holds is asked to come back after this: that request's
// sink is running, and has answered by then in all likelihood.
const CLAIMED_RETRY_SECONDS = 2

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

/**
 * Creates a relay: the collector protocol (README "Collector protocol") on Web standards, for a
 * shop to run on its own domain in front of the service. For each batch it checks the keys and
 * the rules, fills `user.ip` from the connection (through the proxies the shop trusts) and
 * `user.ua` from the request, corrects the device clock by `?t_sent=`, answers `?unconfirmed=`
 * from its store, renews the uid cookie from the server, and hands the accepted events to its
 * sink: 2xx only once the sink has them, 503 with Retry-After when it fails, so the browser,
 * whose outbox keeps them, sends them again. Each event id reaches the sink once, across every
 * instance that shares the store (README "First-party relay" says where that can fail).
 */
export function createRelay(options: RelayOptions): Relay {
  const { keys, sink, store = memoryStore(), origins, maxBodyBytes = 256 * 1024, claimMs = 30000, onBatch, rateLimit = RATE_LIMIT } = options
  if (!Array.isArray(keys) || !keys.length) throw new TypeError('discovery-feedback: relay: options.keys must list the API keys it takes')
  if (typeof sink != 'function') throw new TypeError('discovery-feedback: relay: options.sink is required')
  const accepted = new Set(keys)
  const addresses = clientAddress(options)
  const fromServer = serverSenders(options.serverSecrets)
  const cookie = options.cookie === false ? undefined : options.cookie || {}

  // A failing handler must not turn one fault into two.
  const report = (error: unknown) => attempt(() => options.onError?.(error as Error))

  /** CORS headers for a request's Origin: its own origin needs none; others only if listed. */
  const cors = (request: Request): Record<string, string> => {
    // '*' is the same answer for everyone, so it goes on every response, as README's collector protocol asks.
    if (origins == '*') return { 'access-control-allow-origin': '*', 'access-control-expose-headers': 'Retry-After' }
    const origin = request.headers.get('origin')
    if (!origin || !origins) return {}
    return origins.includes(origin) ? { 'access-control-allow-origin': origin, 'access-control-expose-headers': 'Retry-After', vary: 'Origin' } : {}
  }

  /**
   * The uid cookie renewed from the server, so Safari does not cap it at 7 days (README
   * "Safari's 7-day cookie cap"). Only a cookie the request carried is renewed: the tracker
   * that wrote it had consent to store it, and a tracker that keeps its ids in memory, or just
   * deleted them (logout, consent withdrawn), sends none.
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
   * relay on the shop's own domain gets it) and the uids of its events.
   */
  const askers = (request: Request, events: RelayEvent[]) => {
    const uid = uidFromCookieHeader(request.headers.get('cookie'))
    return new Set([...(uid ? [uid] : []), ...events.map((event) => event.user.uid)].map(ownerOf))
  }

  /**
   * README "Collector protocol": of the event ids a tracker handed over unconfirmed, those it
   * must send again. Only an id stored for one of the asking shoppers counts as arrived: of
   * anyone else's, the answer is "missing" whether it arrived or not, so that nobody learns
   * whether another shopper's order was placed (a resend is a duplicate, and stored once).
   */
  async function unconfirmedOf(asked: string[], owners: Set<string>): Promise<string[]> {
    if (!asked.length || !owners.size) return asked
    // The question names no key: each id is looked up under every key the relay takes.
    const scoped = asked.flatMap((id) => keys.map((key) => scopedId(key, id)))
    const found = await store.lookup(scoped)
    return asked.filter((_, index) => !keys.some((_, k) => owners.has(found[index * keys.length + k] as string)))
  }

  async function handleBatch(request: Request, info: RequestInfo | undefined, headers: Record<string, string>): Promise<Response> {
    const intake = await readEnvelopes(request, maxBodyBytes)
    if ('status' in intake) return json(intake.status, failure(intake.message), headers)

    const receivedAt = Date.now()
    const query = new URL(request.url).searchParams
    // The gap between the sender's clock and ours: the event happened at t_client plus that gap.
    // A t_sent that is no time, or more than a day from ours, corrects nothing.
    const sentAt = Number(query.get('t_sent'))
    const skew = sentAt > 0 && Math.abs(receivedAt - sentAt) <= DAY ? receivedAt - sentAt : 0
    const ip = addresses.of(request.headers, info?.remoteAddress)
    const ua = request.headers.get('user-agent') || undefined
    const server = fromServer(request)
    // A page's events count against its address's bucket; the shop's server sends for every shopper.
    const client = server ? undefined : addresses.client(request.headers, info?.remoteAddress)
    if (rateLimit && store.take && client) {
      // Each event costs a token, and so does each 50 ids asked about (a question is store reads
      // too); a request costs one at least, so that empty ones are counted as well.
      const question = query.get('unconfirmed')
      const asked = question ? question.split(',').length : 0
      const waitMs = await store.take(client, Math.max(1, intake.envelopes.length) + Math.ceil(asked / 50), rateLimit)
      const seconds = String(Math.max(1, Math.ceil(waitMs / 1000)))
      if (waitMs > 0) return json(429, failure('too many events from this address: come back in ' + seconds + ' s'), { ...headers, 'retry-after': seconds })
    }

    const batch: BatchReport = { accepted: [], duplicates: [], rejected: [], variantsFilled: 0, sentAt: sentAt > 0 ? sentAt : undefined }
    const events: RelayEvent[] = []
    intake.envelopes.forEach((sent, index) => {
      const { envelope, filled } = asEnvelope(sent, intake.key)
      const checked = checkEnvelope(envelope, accepted)
      if ('error' in checked) return batch.rejected.push({ index, error: checked.error, envelope: sent })
      if (filled) batch.variantsFilled++
      const event = checked.event
      // SPEC "User object": ip and ua default to those of the request, and only the shop's own
      // server senders may give others (server-senders.ts). A given ip is under the same privacy setting.
      const givenIp = server ? addresses.allowed(event.user.ip) : undefined
      const givenUa = server ? event.user.ua : undefined
      if (givenIp || ip) event.user.ip = givenIp || ip
      else delete event.user.ip
      if (givenUa || ua) event.user.ua = givenUa || ua
      else delete event.user.ua
      events.push({ ...event, received_at: receivedAt, t_corrected: event.t_client + skew })
    })

    const token = nanoid()
    const claims = await claimEvents(store, events, server, token, claimMs)
    const fresh = claims.fresh
    batch.duplicates.push(...claims.duplicates)
    if (fresh.length) {
      try {
        await sink(fresh)
      } catch (error) {
        // What the sink got through before it failed counts as delivered; the rest is let go for the resend.
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
      // the window README names: the ids are not marked, and a resend would reach the sink again.
      await claims.delivered(fresh).catch(report)
    }
    batch.accepted = fresh

    const result: Record<string, unknown> = {
      accepted: fresh.length,
      duplicates: batch.duplicates.length,
      rejected: batch.rejected.map(({ index, error }) => ({ index, error }))
    }
    // README "Collector protocol": of the ids the tracker handed over unconfirmed, those that never arrived.
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
    const answered = { ...headers, ...setCookie(request) }
    // Another request holds some of these events, its sink still running: the whole batch comes back later, when they are settled.
    if (claims.held)
      return json(503, failure('some events are being stored by another request', result), { ...answered, 'retry-after': String(CLAIMED_RETRY_SECONDS) })
    if (fresh.length || batch.duplicates.length || !batch.rejected.length) return json(200, result, answered)
    const errors = batch.rejected.map(({ error }) => error)
    if (errors.every((error) => error == KEY_MISSING)) return json(401, failure(KEY_MISSING, result), answered)
    // A batch that failed only on keys, with at least one key given but not ours, is forbidden.
    if (errors.every((error) => error == KEY_MISSING || error == KEY_INVALID)) return json(403, failure(KEY_INVALID, result), answered)
    return json(400, failure(errors[0], result), answered)
  }

  return {
    async fetch(request, info) {
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
        return json(503, failure('the relay cannot store events now'), { ...headers, 'retry-after': String(CLAIMED_RETRY_SECONDS) })
      }
    }
  }
}
