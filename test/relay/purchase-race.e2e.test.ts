// @vitest-environment node
// Two purchases of one order at the same moment, over real HTTP: against two relay instances
// sharing a real redis-server (one request to each) and against one relay with memoryStore().
// The first request's sink is held open, so that the second arrives while the first is being
// stored: the moment in which neither saw the other. Once every sender has had its answer, and
// sent again what it was told to (503 with Retry-After), the sink must hold what it would hold
// had the two come one after the other.
import { describe, expect, it } from 'vitest'
import { createRelay, memoryStore, redisStore, toNodeHandler, type DeliveryStore, type RelayEvent } from '../../src/relay'
import { orderEventId } from '../../src/shared/order-event-id'
import { SERVER_AGENT } from '../../src/shared/server-agent'
import { waitFor } from '../support/wait'
import { redisForTestFile } from './redis-server'
import { gate, recordingSink, serve } from './support'

const KEY = 'SHOP_A'
const SECRET = 'the-shops-server-secret-0123456789'
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36'

const shared = redisForTestFile()
let prefixes = 0

/** Relays over one store (two on Redis, one on memoryStore()), whose sink holds every call until `open()`, and counts the calls begun. */
async function heldRelays(kind: 'redis' | 'memory') {
  const recorded = recordingSink()
  const held = gate()
  recorded.holdUntil(held.promise)
  let calls = 0
  const sink = (events: RelayEvent[]) => {
    calls++
    return recorded.sink(events)
  }
  const store: DeliveryStore = kind == 'redis' ? redisStore(shared.client(), { prefix: `race${++prefixes}:` }) : memoryStore()
  const make = () => createRelay({ keys: [KEY], sink, store, serverSecrets: [SECRET] })
  const started = kind == 'redis' ? [await serve(toNodeHandler(make())), await serve(toNodeHandler(make()))] : [await serve(toNodeHandler(make()))]
  shared.servers.push(...started)
  const urls = started.map((server) => server.origin + '/df/events')
  return { recorded, url: (index: number) => urls[index % urls.length], calls: () => calls, open: held.open }
}

const shopper = { uid: 'shopper-1', sid: 'session-1' }
const FORGER = { uid: 'forger', sid: 'forger-session' }

/** A purchase of `orderId`, its revenue told by `revenue`: two senders of one order say different things. */
const purchase = (orderId: string, user: object, revenue: number) => ({
  event: 'purchase',
  properties: { order_id: orderId, currency: 'EUR', revenue, line_items: [{ item_id: '42', variant_item_id: '421', unit_price: revenue, quantity: 1 }] },
  key: KEY,
  t_client: Date.now(),
  user,
  event_id: orderEventId(KEY, orderId)
})

/** A sender: a shopper's page, or the shop's server sender with its secret, naming the shopper's ip and ua. */
type Sender = { name: string; headers: Record<string, string>; user: object }
const page = (user: object): Sender => ({ name: 'page', headers: { 'user-agent': CHROME }, user })
const server: Sender = {
  name: 'server sender',
  headers: { 'user-agent': SERVER_AGENT, authorization: 'Bearer ' + SECRET },
  user: { ...shopper, ip: '198.51.100.23', ua: CHROME }
}

/** Posts until the answer is not 503, as the tracker and the server sender do after Retry-After (here at once: the test opened the sink). */
async function send(url: string, sender: Sender, body: unknown, first?: Promise<Response>) {
  const attempt = () => fetch(url, { method: 'POST', headers: { 'content-type': 'text/plain;charset=UTF-8', ...sender.headers }, body: JSON.stringify(body) })
  let response = await (first ?? attempt())
  const statuses = [response.status]
  while (response.status == 503) {
    await response.text()
    response = await attempt()
    statuses.push(response.status)
  }
  return { statuses, body: await response.json() }
}

/** What the sink holds of the order: each purchase's sender, revenue and marks. */
const stored = (events: RelayEvent[]) =>
  events
    .filter((event) => event.event == 'purchase')
    .map((event) => ({
      uid: event.user.uid,
      revenue: (event.properties as { revenue: number }).revenue,
      from_server: !!event.from_server,
      order_conflict: !!event.order_conflict
    }))

/**
 * Sends `first`'s purchase, and once the sink holds it, `second`'s through the other instance;
 * waits until the second is answered or has reached the sink too, then opens the sink.
 */
async function atOnce(kind: 'redis' | 'memory', orderId: string, first: [Sender, number], second: [Sender, number]) {
  const relays = await heldRelays(kind)
  const [firstBody, secondBody] = [first, second].map(([sender, revenue]) => [purchase(orderId, sender.user, revenue)])
  const firstAnswer = send(relays.url(0), first[0], firstBody)
  await waitFor(() => relays.calls() == 1, "the first purchase's sink call")
  const secondRequest = fetch(relays.url(1), {
    method: 'POST',
    headers: { 'content-type': 'text/plain;charset=UTF-8', ...second[0].headers },
    body: JSON.stringify(secondBody)
  })
  let answered = false
  void secondRequest.then(() => (answered = true))
  await waitFor(() => answered || relays.calls() == 2, 'the second purchase answered, or in the sink too')
  relays.open()
  const answers = await Promise.all([firstAnswer, send(relays.url(1), second[0], secondBody, secondRequest)])
  return { answers, stored: stored(relays.recorded.events()) }
}

describe.each(['redis', 'memory'] as const)('on %s', (kind) => {
  it("stores one purchase when a shopper's page and the server sender naming that shopper send an order at once: the page's, the server's a duplicate", async () => {
    const { answers, stored } = await atOnce(kind, '9101', [page(shopper), 120], [server, 100])
    expect(stored).toEqual([{ uid: shopper.uid, revenue: 120, from_server: false, order_conflict: false }])
    expect(answers[1].body).toMatchObject({ accepted: 0, duplicates: 1 })
  })

  it("stores one purchase when the server sender and the shopper's page send an order at once: the server's, the page's a duplicate", async () => {
    const { answers, stored } = await atOnce(kind, '9102', [server, 100], [page(shopper), 120])
    expect(stored).toEqual([{ uid: shopper.uid, revenue: 100, from_server: true, order_conflict: false }])
    expect(answers[1].body).toMatchObject({ accepted: 0, duplicates: 1 })
  })

  it("marks the second of two shoppers' purchases of one order sent at once as a conflict, as when they come one after the other", async () => {
    const { answers, stored } = await atOnce(kind, '9103', [page(FORGER), 0.01], [page(shopper), 120])
    expect(stored).toEqual([
      { uid: FORGER.uid, revenue: 0.01, from_server: false, order_conflict: false },
      { uid: shopper.uid, revenue: 120, from_server: false, order_conflict: true }
    ])
    expect(answers[1].body).toMatchObject({ accepted: 1, duplicates: 0 })
  })

  it("marks the second of two shoppers' purchases of one order in one request as a conflict, as when they come one after the other", async () => {
    const relays = await heldRelays(kind)
    relays.open()
    const answer = await send(relays.url(0), page(shopper), [purchase('9104', FORGER, 0.01), purchase('9104', shopper, 120)])
    expect(answer).toEqual({ statuses: [200], body: { accepted: 2, duplicates: 0, rejected: [] } })
    expect(stored(relays.recorded.events())).toEqual([
      { uid: FORGER.uid, revenue: 0.01, from_server: false, order_conflict: false },
      { uid: shopper.uid, revenue: 120, from_server: false, order_conflict: true }
    ])
    // And the order is known as the first one's: the real shopper's reload is a duplicate, a third shopper's marked.
    expect((await send(relays.url(1), page(shopper), [purchase('9104', shopper, 120)])).body).toMatchObject({ accepted: 0, duplicates: 1 })
    expect((await send(relays.url(1), page({ uid: 'third', sid: 't' }), [purchase('9104', { uid: 'third', sid: 't' }, 5)])).body).toMatchObject({ accepted: 1 })
    expect(stored(relays.recorded.events()).at(-1)).toMatchObject({ uid: 'third', order_conflict: true })
  })
})
