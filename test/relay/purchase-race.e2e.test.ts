// @vitest-environment node
// Two purchases of one order at the same moment, over real HTTP: against two relay instances
// sharing a real redis-server (one request to each) and against one relay with memoryStore().
// The first request's sink is held open, so that the second arrives while the first is being
// stored: the moment in which neither saw the other. Once every sender has had its answer, and
// sent again what it was told to (503 with Retry-After), the sink must hold what it would hold
// had the two come one after the other, and the relay's count of orders by who reported them
// must say what it would say then.
import { describe, expect, it } from 'vitest'
import { createRelay, memoryStore, redisStore, toNodeHandler, type DeliveryStore, type Relay, type RelayEvent } from '../../src/relay'
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

/**
 * Relays over one store (two on Redis, one on memoryStore()), whose sink holds every call until
 * `open()`, and counts the calls begun; `wrap` may stand between them and their store.
 */
async function heldRelays(kind: 'redis' | 'memory', wrap: (store: DeliveryStore) => DeliveryStore = (store) => store) {
  const recorded = recordingSink()
  const held = gate()
  recorded.holdUntil(held.promise)
  let calls = 0
  const sink = (events: RelayEvent[]) => {
    calls++
    return recorded.sink(events)
  }
  const store = wrap(kind == 'redis' ? redisStore(shared.client(), { prefix: `race${++prefixes}:` }) : memoryStore())
  const relays: Relay[] = []
  const make = () => {
    relays.push(createRelay({ keys: [KEY], sink, store, serverSecrets: [SECRET] }))
    return relays[relays.length - 1]
  }
  const started = kind == 'redis' ? [await serve(toNodeHandler(make())), await serve(toNodeHandler(make()))] : [await serve(toNodeHandler(make()))]
  shared.servers.push(...started)
  const urls = started.map((server) => server.origin + '/df/events')
  /** One series of the relays' metrics, by its name and labels as they print, summed over the instances. */
  const metric = async (series: string) => {
    const texts = await Promise.all(relays.map((relay) => relay.metrics()))
    return texts.reduce(
      (sum, text) =>
        sum +
        Number(
          text
            .split('\n')
            .find((row) => row.startsWith(series + ' '))!
            .slice(series.length + 1)
        ),
      0
    )
  }
  return { recorded, url: (index: number) => urls[index % urls.length], calls: () => calls, open: held.open, metric }
}

/** The relays' count of orders by who reported them: [browser first, server first, browser second, server second]. */
const reportsOf = (relays: Awaited<ReturnType<typeof heldRelays>>) =>
  Promise.all(
    [
      ['browser', 'first'],
      ['server', 'first'],
      ['browser', 'second'],
      ['server', 'second']
    ].map(([reporter, order]) => relays.metric(`df_relay_order_reports_total{reporter="${reporter}",order="${order}"}`))
  )

/** The relays' count of later copies that differed from their order's first, for each of `fields`. */
const differencesOf = (relays: Awaited<ReturnType<typeof heldRelays>>, fields: string[]) =>
  Promise.all(fields.map((field) => relays.metric(`df_relay_order_differences_total{field="${field}"}`)))

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
  return { answers, stored: stored(relays.recorded.events()), relays }
}

describe.each(['redis', 'memory'] as const)('on %s', (kind) => {
  it("stores one purchase when a shopper's page and the server sender naming that shopper send an order at once: the page's, the server's a duplicate", async () => {
    const { answers, stored, relays } = await atOnce(kind, '9101', [page(shopper), 120], [server, 100])
    expect(stored).toEqual([{ uid: shopper.uid, revenue: 120, from_server: false, order_conflict: false }])
    expect(answers[1].body).toMatchObject({ accepted: 0, duplicates: 1 })
    // Counted as when one follows the other: the page's copy first, the server's second, differing in revenue and lines.
    expect(await reportsOf(relays)).toEqual([1, 0, 0, 1])
    expect(await differencesOf(relays, ['currency', 'revenue', 'line_items'])).toEqual([0, 1, 1])
  })

  it("stores one purchase when the server sender and the shopper's page send an order at once: the server's, the page's a duplicate", async () => {
    const { answers, stored, relays } = await atOnce(kind, '9102', [server, 100], [page(shopper), 120])
    expect(stored).toEqual([{ uid: shopper.uid, revenue: 100, from_server: true, order_conflict: false }])
    expect(answers[1].body).toMatchObject({ accepted: 0, duplicates: 1 })
    expect(await reportsOf(relays)).toEqual([0, 1, 1, 0])
    expect(await differencesOf(relays, ['currency', 'revenue', 'line_items'])).toEqual([0, 1, 1])
  })

  it("marks the second of two shoppers' purchases of one order sent at once as a conflict, as when they come one after the other", async () => {
    const { answers, stored, relays } = await atOnce(kind, '9103', [page(FORGER), 0.01], [page(shopper), 120])
    expect(stored).toEqual([
      { uid: FORGER.uid, revenue: 0.01, from_server: false, order_conflict: false },
      { uid: shopper.uid, revenue: 120, from_server: false, order_conflict: true }
    ])
    expect(answers[1].body).toMatchObject({ accepted: 1, duplicates: 0 })
    // Another shopper's copy is no report of the order: it was reported once, by a browser.
    expect(await reportsOf(relays)).toEqual([1, 0, 0, 0])
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
    expect(await reportsOf(relays)).toEqual([1, 0, 0, 0])
  })

  it("counts the order's second report once when one request carries the shopper's page copy and another shopper's, after the server sender's", async () => {
    const relays = await heldRelays(kind)
    relays.open()
    expect((await send(relays.url(0), server, [purchase('9108', server.user, 100)])).body).toMatchObject({ accepted: 1 })
    const answer = await send(relays.url(1), page(shopper), [purchase('9108', shopper, 120), purchase('9108', FORGER, 0.01)])
    expect(answer).toEqual({ statuses: [200], body: { accepted: 1, duplicates: 1, rejected: [] } })
    expect(stored(relays.recorded.events())).toEqual([
      { uid: shopper.uid, revenue: 100, from_server: true, order_conflict: false },
      { uid: FORGER.uid, revenue: 0.01, from_server: false, order_conflict: true }
    ])
    // The shopper's copy is the browser's report of the order; the forger's after it in the same request is none.
    expect(await reportsOf(relays)).toEqual([0, 1, 1, 0])
  })

  it("counts the shopper's page copy once when two of them come at once after the server sender's", async () => {
    // What the store's lookup read of the order's keys for the first page copy is given back
    // only once the second copy has come: the moment in which neither saw what the other would write.
    const looked = gate()
    let orderLookups = 0
    const relays = await heldRelays(kind, (store) => ({
      claim: (ids, token, ttlMs) => store.claim(ids, token, ttlMs),
      delivered: (ids, token, owners) => store.delivered(ids, token, owners),
      release: (ids, token) => store.release(ids, token),
      take: store.take && ((name, cost, limit) => store.take!(name, cost, limit)),
      async lookup(ids) {
        const said = await store.lookup(ids)
        if (ids.length && ++orderLookups == 2) await looked.promise
        return said
      }
    }))
    relays.open()
    expect((await send(relays.url(0), server, [purchase('9105', server.user, 100)])).body).toMatchObject({ accepted: 1 })
    const firstCopy = send(relays.url(0), page(shopper), [purchase('9105', shopper, 120)])
    await waitFor(() => orderLookups == 2, "the first page copy's lookup")
    const secondCopy = fetch(relays.url(1), {
      method: 'POST',
      headers: { 'content-type': 'text/plain;charset=UTF-8', ...page(shopper).headers },
      body: JSON.stringify([purchase('9105', shopper, 120)])
    })
    let answered = false
    void secondCopy.then(() => (answered = true))
    await waitFor(() => answered || orderLookups == 3, 'the second page copy answered, or judged too')
    looked.open()
    const answers = await Promise.all([firstCopy, send(relays.url(1), page(shopper), [purchase('9105', shopper, 120)], secondCopy)])
    for (const answer of answers) expect(answer.body).toMatchObject({ accepted: 0, duplicates: 1 })
    expect(stored(relays.recorded.events())).toEqual([{ uid: shopper.uid, revenue: 100, from_server: true, order_conflict: false }])
    // The server's copy first, the browser's second: once, however many copies of the page came.
    expect(await reportsOf(relays)).toEqual([0, 1, 1, 0])
  })

  it('counts the orders a request stored while another of its purchases waited for its order', async () => {
    const relays = await heldRelays(kind)
    // Order 9106 is being stored by the forger's request (the sink held) when the shopper's
    // request comes with a purchase of order 9107, stored at once, and one of 9106, which waits.
    const forgers = send(relays.url(0), page(FORGER), [purchase('9106', FORGER, 0.01)])
    await waitFor(() => relays.calls() == 1, "the forger's purchase in the sink")
    const body = [purchase('9107', shopper, 50), purchase('9106', shopper, 120)]
    const shoppers = fetch(relays.url(1), {
      method: 'POST',
      headers: { 'content-type': 'text/plain;charset=UTF-8', ...page(shopper).headers },
      body: JSON.stringify(body)
    })
    await waitFor(() => relays.calls() == 2, "the shopper's purchase of 9107 in the sink")
    relays.open()
    const [, answer] = await Promise.all([forgers, send(relays.url(1), page(shopper), body, shoppers)])
    expect(answer).toMatchObject({ statuses: [503, 200], body: { accepted: 1, duplicates: 1 } })
    expect(stored(relays.recorded.events())).toEqual([
      { uid: FORGER.uid, revenue: 0.01, from_server: false, order_conflict: false },
      { uid: shopper.uid, revenue: 50, from_server: false, order_conflict: false },
      { uid: shopper.uid, revenue: 120, from_server: false, order_conflict: true }
    ])
    // Two orders, each first reported by a browser: 9107 counted although its request was answered 503.
    expect(await reportsOf(relays)).toEqual([2, 0, 0, 0])
  })
})
