// @vitest-environment node
// No purchase vanishes at the relay: what a page can send to erase, probe or shadow another
// shopper's purchase, over real HTTP, against two relay instances sharing a real redis-server
// and against one relay with memoryStore(); each attack is followed by the real purchases, which
// must reach the sink once, unmarked. Then the agents a bot list flags: a purchase is kept.
import { stringify } from 'qs'
import { describe, expect, it } from 'vitest'
import { createRelay, memoryStore, redisStore, toNodeHandler, type DeliveryStore, type RelayEvent, type RelayOptions } from '../../src/relay'
import { deliveryIds, isOrderId, ownerOf } from '../../src/relay/dedupe'
import { createServerTracker } from '../../src/server'
import { orderEventId } from '../../src/shared/order-event-id'
import { redisForTestFile } from './redis-server'
import { recordingSink, serve } from './support'

const KEY = 'SHOP_A'
const SECRET = 'the-shops-server-secret-0123456789'
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36'
const HEADLESS = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36'
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'

const shared = redisForTestFile()
let prefixes = 0

/** Relays on their own ports over one store, and the sink they share: two instances on Redis (a fresh prefix each time), one on memoryStore(). */
async function relays(kind: 'redis' | 'memory', options: Partial<RelayOptions> = {}) {
  const recorded = recordingSink()
  const store: DeliveryStore = kind == 'redis' ? redisStore(shared.client(), { prefix: `purchases${++prefixes}:` }) : memoryStore()
  const make = () => createRelay({ keys: [KEY], sink: recorded.sink, store, ...options })
  const started = kind == 'redis' ? [await serve(toNodeHandler(make())), await serve(toNodeHandler(make()))] : [await serve(toNodeHandler(make()))]
  shared.servers.push(...started)
  const urls = started.map((server) => server.origin + '/df/events')
  return { recorded, urls, url: (index: number) => urls[index % urls.length] }
}

const shopperOf = (order: string) => ({ uid: 'shopper-' + order, sid: 'session-' + order })
const FORGER = { uid: 'forger', sid: 'forger-session' }

const purchase = (orderId: string, user = shopperOf(orderId), revenue = 499) => ({
  event: 'purchase',
  properties: { order_id: orderId, currency: 'EUR', revenue, line_items: [{ item_id: '42', variant_item_id: '421', unit_price: revenue, quantity: 1 }] },
  key: KEY,
  t_client: Date.now(),
  user,
  event_id: orderEventId(KEY, orderId)
})
const click = (eventId: string, user = FORGER) => ({
  event: 'click-item',
  properties: { item_id: '42', variant_item_id: '421' },
  key: KEY,
  t_client: Date.now(),
  user,
  event_id: eventId
})

/** A POST as a shopper's browser makes it: its JSON answer. */
async function post(url: string, body: unknown, ua = CHROME) {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'text/plain;charset=UTF-8', 'user-agent': ua }, body: JSON.stringify(body) })
  return { status: response.status, body: await response.json() }
}

/** The feedback library's image request: one envelope in the query, in qs's encoding. */
async function image(url: string, envelope: object) {
  const response = await fetch(url + '?' + stringify(envelope), { headers: { 'user-agent': CHROME } })
  await response.arrayBuffer()
  return { status: response.status, type: response.headers.get('content-type') }
}

/**
 * Every id a page could send to land on a key the relay keeps for the order: the order's event
 * id with each suffix the relay once derived keys with, and each key the relay derives today,
 * whole and without its scope. A page knows the order id (sequential in many shops), and so its
 * event id; it does not know the shopper's uid, but is given the relay's own digest of it here.
 */
function forgedIds(orderId: string): string[] {
  const id = orderEventId(KEY, orderId)
  const { order } = deliveryIds(purchase(orderId) as never, ownerOf(shopperOf(orderId).uid), false)
  const derived = [order!.shopper, order!.reported, order!.server, order!.pending]
  const unscoped = derived.map((key) => key.slice(key.indexOf('.') + 1))
  return [id, id + '#server', id + '#0', ...derived, ...unscoped]
}

/** What a click-item with an order's id is refused with. */
const NOT_AN_ORDER = "click-item: event_id must not be an order's ('order.…' is a purchase's)"

const purchasesOf = (events: RelayEvent[], orderId: string) =>
  events.filter((event) => event.event == 'purchase' && (event.properties as { order_id: string }).order_id == orderId)

describe.each(['redis', 'memory'] as const)('on %s', (kind) => {
  it('click-items carrying every key the relay derives for 20 orders, by POST and by image GET, erase none of their purchases', async () => {
    const { recorded, url } = await relays(kind)
    const orders = Array.from({ length: 20 }, (_, index) => String(5001 + index))
    let request = 0
    for (const orderId of orders) {
      const ids = forgedIds(orderId)
      // All of them posted in one batch, and each in an image request of its own.
      const refused = ids.flatMap((id, index) => (isOrderId(id) ? [{ index, error: NOT_AN_ORDER }] : []))
      expect(
        (
          await post(
            url(request++),
            ids.map((id) => click(id))
          )
        ).body
      ).toEqual({ accepted: ids.length - refused.length, duplicates: 0, rejected: refused })
      for (const id of ids) {
        expect(await image(url(request++), click(id, { uid: 'forger-2', sid: 'forger-2-session' }))).toEqual(
          isOrderId(id) ? { status: 400, type: 'application/json' } : { status: 200, type: 'image/gif' }
        )
      }
    }
    // The real purchases, each from its shopper's thank-you page.
    for (const orderId of orders) {
      expect((await post(url(request++), [purchase(orderId)])).body, orderId).toEqual({ accepted: 1, duplicates: 0, rejected: [] })
    }
    const stored = recorded.events()
    for (const orderId of orders) {
      const [real, ...more] = purchasesOf(stored, orderId)
      expect(more, orderId).toEqual([])
      expect(real, orderId).toMatchObject({ user: shopperOf(orderId) })
      expect(real).not.toHaveProperty('order_conflict')
    }
    // And a reload of each thank-you page is a duplicate: the relay still keeps each purchase once.
    for (const orderId of orders.slice(0, 3)) expect((await post(url(request++), [purchase(orderId)])).body).toMatchObject({ accepted: 0, duplicates: 1 })
  })

  it("answers a probe with an order's own event id the same for a bought and an unbought order, and the real purchase after it arrives unmarked", async () => {
    const { recorded, url } = await relays(kind)
    const bought = '6001'
    const unbought = '6002'
    await post(url(0), [purchase(bought)])
    // A click-item, and a question, for each order: the same answers.
    const probes = [bought, unbought].map((orderId) => click(orderEventId(KEY, orderId)))
    const answers = [await post(url(1), [probes[0]]), await post(url(0), [probes[1]])]
    expect(answers[0]).toEqual(answers[1])
    expect(answers[0].body).toMatchObject({ accepted: 0, duplicates: 0, rejected: [{ index: 0, error: NOT_AN_ORDER }] })
    // A forged purchase of each: taken alike, whether the order was bought or not.
    const forged = [await post(url(1), [purchase(bought, FORGER, 0.01)]), await post(url(0), [purchase('6003', FORGER, 0.01)])]
    expect(forged[0]).toEqual(forged[1])
    const asked = '?unconfirmed=' + [bought, unbought].map((orderId) => orderEventId(KEY, orderId)).join(',')
    // Asked by another uid than the one that probed: both missing, as for any id not its own.
    const question = await post(url(1) + asked, [click('probe-' + Date.now(), { uid: 'asker', sid: 'asker-session' })])
    expect(question.body.missing).toEqual([bought, unbought].map((orderId) => orderEventId(KEY, orderId)))
    // The unbought order is placed after the probe: its purchase is stored as if no probe had come.
    expect((await post(url(1), [purchase(unbought)])).body).toEqual({ accepted: 1, duplicates: 0, rejected: [] })
    const [real] = purchasesOf(recorded.events(), unbought)
    expect(real).toMatchObject({ user: shopperOf(unbought) })
    expect(real).not.toHaveProperty('order_conflict')
    expect(purchasesOf(recorded.events(), unbought)).toHaveLength(1)
  })

  it("stores the server sender's purchase though the shopper's page sent the order's id first, with another event or on another order", async () => {
    const { recorded, url } = await relays(kind, { serverSecrets: [SECRET] })
    const shopper = shopperOf('8001')
    const id = orderEventId(KEY, '8001')
    const answer = await post(url(0), [click(id, shopper), { ...purchase('9999', shopper, 1e9), event_id: id }])
    // The click-item is refused by name; the purchase of order 9999 is stored as order 9999's.
    expect(answer.body).toEqual({ accepted: 1, duplicates: 0, rejected: [{ index: 0, error: NOT_AN_ORDER }] })
    const server = createServerTracker({ key: KEY, endpoint: url(1), secret: SECRET, flushInterval: 0 })
    server.track('purchase', purchase('8001').properties as never, { ...shopper, ip: '198.51.100.23', ua: 'Mozilla/5.0 (iPhone)' })
    await server.close()
    expect(server.stats()).toMatchObject({ sent: 1, queued: 0 })
    expect(purchasesOf(recorded.events(), '8001')).toEqual([
      expect.objectContaining({ from_server: true, user: expect.objectContaining({ uid: shopper.uid }) })
    ])
    expect(purchasesOf(recorded.events(), '9999').map((event) => event.event_id)).toEqual([orderEventId(KEY, '9999')])
  })

  it("after a forged purchase sent first, stores the server sender's copy beside the real one, to settle by; a forged copy without an id is marked too", async () => {
    const { recorded, url } = await relays(kind, { serverSecrets: [SECRET] })
    const orderId = '8101'
    expect((await post(url(0), [purchase(orderId, FORGER, 0.01)])).body).toMatchObject({ accepted: 1 })
    expect((await post(url(1), [purchase(orderId)])).body).toMatchObject({ accepted: 1 })
    const server = createServerTracker({ key: KEY, endpoint: url(0), secret: SECRET, flushInterval: 0 })
    server.track('purchase', purchase(orderId).properties as never, { ...shopperOf(orderId), ip: '198.51.100.23', ua: 'Mozilla/5.0 (iPhone)' })
    await server.close()
    expect(server.stats()).toMatchObject({ sent: 1 })
    // A second forger sends the order with no event id at all: the relay gives it the order's, and marks it.
    const { event_id: _, ...unnamed } = purchase(orderId, { uid: 'forger-2', sid: 'f2' }, 0.02)
    expect((await post(url(1), [unnamed])).body).toMatchObject({ accepted: 1 })
    const stored = purchasesOf(recorded.events(), orderId)
    expect(stored.map((event) => [event.user.uid, !!event.order_conflict, !!event.from_server])).toEqual([
      ['forger', false, false],
      [shopperOf(orderId).uid, true, false],
      [shopperOf(orderId).uid, true, true],
      ['forger-2', true, false]
    ])
    expect(new Set(stored.map((event) => event.event_id))).toEqual(new Set([orderEventId(KEY, orderId)]))
  })

  it('refuses by name an event id the store could not tell from another, and stores the valid events beside it', async () => {
    const { recorded, url } = await relays(kind)
    const answer = await post(url(0), [click('page.x\ud800'), click('page.x\udc00'), click('page.x-fine')])
    expect(answer.body).toEqual({
      accepted: 1,
      duplicates: 0,
      rejected: [0, 1].map((index) => ({
        index,
        error: 'click-item: event_id must be well-formed text: a lone surrogate cannot be told apart from another in the store'
      }))
    })
    expect(recorded.events().map((event) => event.event_id)).toEqual(['page.x-fine'])
  })
})

describe('a purchase from an agent a bot list flags', () => {
  it("reaches the sink, marked bot, with the relay's default bots: 'drop', while that agent's other events are dropped and said so", async () => {
    const notices: string[] = []
    const { recorded, url } = await relays('redis', { onError: (error) => notices.push(error.name + ': ' + error.message) })
    for (const [index, ua] of [HEADLESS, GOOGLEBOT].entries()) {
      const orderId = String(7001 + index)
      const answer = await post(url(index), [click('view-' + orderId, shopperOf(orderId)), purchase(orderId)], ua)
      expect(answer.body).toEqual({ accepted: 2, duplicates: 0, rejected: [] })
      const [kept] = purchasesOf(recorded.events(), orderId)
      expect(kept).toMatchObject({ bot: true, user: { ua, uid: shopperOf(orderId).uid } })
    }
    expect(recorded.events().map((event) => event.event)).toEqual(['purchase', 'purchase'])
    // Each relay instance says once what it dropped.
    expect(notices).toEqual(
      Array(2).fill(
        "DropNotice: discovery-feedback: relay: dropped 1 event of bots' user agents (bots: 'drop'; purchases are kept, marked bot; bots: 'keep' keeps all)"
      )
    )
  })
})
