import { nanoid } from 'nanoid'
import { attempt } from '../shared/attempt'
import { admission } from './admission'
import { batchAnswer } from './batch-status'
import { BODY_TIMEOUT_MS } from './body-limits'
import { botSorter } from './bots'
import { claimEvents } from './claims'
import { clientAddress } from './client-address'
import { clockOf } from './clock-skew'
import { corsHeaders, preflight } from './cors'
import { deadLetters } from './dead-letter'
import { dropNotices } from './drop-notices'
import { envelopeAcceptor } from './envelope-acceptor'
import { asImage } from './image-answer'
import { memoryStore } from './memory-delivery-store'
import { relayMetrics, timedStore } from './metrics'
import { rateLimiter } from './rate-limit'
import { takenAfterRefusals } from './refused-events'
import { CLAIMED_RETRY_SECONDS, failure, json } from './responses'
import { serverSenders, UNPROVEN_SERVER } from './server-senders'
import { settled } from './settled-batch'
import { sinkDelivery } from './sink-delivery'
import type { BatchReport, Relay, RelayOptions, RequestInfo } from './types'
import { uidCookieRenewal } from './uid-cookie-renewal'
import { unconfirmedAnswer } from './unconfirmed'

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
 * @param options - The keys, the sink, the store, the origins, and what the relay trusts.
 */
export function createRelay(options: RelayOptions): Relay {
  const { keys, sink, origins, maxBodyBytes = 256 * 1024, bodyTimeoutMs = BODY_TIMEOUT_MS, claimMs = 30000, onBatch, bots = 'drop' } = options
  checkRequired(options)
  const addresses = clientAddress(options)
  const fromServer = serverSenders(options.serverSecrets)
  const metrics = relayMetrics(sink)
  const store = timedStore(options.store || memoryStore(), metrics)
  const sortBots = botSorter(bots)
  // A failing handler must not turn one fault into two.
  const report = (error: unknown) => attempt(() => options.onError?.(error as Error))
  // What the relay drops, and what it warns of, is said without an onError too: a missing event must leave a trace a person reads.
  const tell = (error: Error) => attempt(() => (options.onError ? options.onError(error) : console.warn(error.name + ': ' + error.message)))
  const notice = dropNotices(tell)
  const dead = deadLetters(options.deadLetter, metrics, report)
  const acceptEnvelopes = envelopeAcceptor(new Set(keys), addresses)
  const renewCookie = uidCookieRenewal(options.cookie)
  const missingOf = unconfirmedAnswer(store, keys)
  const limiter = rateLimiter(store, options.rateLimit, keys.length, tell)
  const admit = admission({ maxBodyBytes, bodyTimeoutMs, limiter })
  const deliver = sinkDelivery(sink, metrics, report, claimMs)

  async function handleBatch(request: Request, info: RequestInfo | undefined, headers: Record<string, string>): Promise<Response> {
    const sender = fromServer(request)
    // A server sender the relay cannot believe is told so, and counts nothing as sent: judged as
    // a page, its agent (Node's, a script's) would make a bot of it, and its events vanish.
    if (sender == 'unproven') {
      notice('unproven', 1, UNPROVEN_SERVER)
      return json(401, failure(UNPROVEN_SERVER), headers)
    }
    const server = sender == 'proven'
    const query = new URL(request.url).searchParams
    // A page's request counts against its address's bucket; the shop's server sends for every shopper.
    const client = server ? undefined : limiter.bucketOf(addresses.client(request.headers, info?.remoteAddress))
    const intake = await admit(request, client, query, headers)
    if (intake instanceof Response) return intake

    const receivedAt = Date.now()
    const { sentAt, skew } = clockOf(query, receivedAt)

    const batch: BatchReport = { accepted: [], duplicates: [], rejected: [], bots: [], variantsFilled: 0, sentAt, orders: [] }
    const ip = addresses.of(request.headers, info?.remoteAddress)
    const ua = request.headers.get('user-agent') || undefined
    const events = acceptEnvelopes(intake, { server, ip, ua, receivedAt, skew }, batch)

    const claims = await claimEvents(store, sortBots(events, batch), server, nanoid(), claimMs)
    batch.duplicates.push(...claims.duplicates)
    const refused = await deliver(claims, headers, client)
    if (refused instanceof Response) return refused
    // What the sink refused for good is answered as refused by the rules is: by index, and dead-lettered.
    batch.accepted = takenAfterRefusals(batch, claims.fresh, refused, intake.envelopes, events)
    // A refused purchase was not stored: it has no part in its order's coverage.
    const gone = new Set(refused.map(({ event }) => event))
    batch.orders = claims.orders.filter(({ event }) => !gone.has(event))
    // Those sortBots dropped, then those kept: purchases, or every one with bots: 'keep'.
    const droppedBots = batch.bots.length
    batch.bots.push(...batch.accepted.filter((event) => event.bot))

    const result: Record<string, unknown> = {
      // A bot's dropped events are answered as taken: told otherwise, it would send them again.
      accepted: batch.accepted.length + droppedBots,
      duplicates: batch.duplicates.length,
      rejected: batch.rejected.map(({ index, error }) => ({ index, error }))
    }
    const unconfirmed = query.get('unconfirmed')
    if (unconfirmed != null) result.missing = await missingOf(unconfirmed, request, events)
    try {
      onBatch?.(batch)
    } catch (error) {
      report(error)
    }
    if (claims.held) {
      metrics.unavailable('held')
      // What this request stored or wrote of its orders is not judged again when it comes back
      // (its purchases are then duplicates): their coverage counts now.
      metrics.orders(batch.orders)
    } else {
      settled(batch, metrics, dead, intake.key, receivedAt, client)
      notice('bot', droppedBots)
      notice('rejected', batch.rejected.length, batch.rejected[0]?.error)
    }
    return batchAnswer(batch, result, claims.held, { ...headers, ...renewCookie(request) })
  }

  async function respond(request: Request, info: RequestInfo | undefined): Promise<Response> {
    const headers = corsHeaders(request, origins)
    try {
      if (request.method == 'OPTIONS') return preflight(request, headers)
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
