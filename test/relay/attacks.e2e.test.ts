// @vitest-environment node
// The relay as an attacker meets it: over real HTTP, two instances sharing a real redis-server,
// the attacks that once worked, each now answered. Each test names the attack it replays.
import { beforeEach, describe, expect, it } from 'vitest'
import { createRelay, redisStore, toNodeHandler, type RelayEvent, type RelayOptions } from '../../src/relay'
import { createServerTracker } from '../../src/server'
import { orderEventId } from '../../src/shared/order-event-id'
import { redisForTestFile } from './redis-server'
import { recordingSink, serve } from './support'

const SECRET = 'the-shops-server-secret-0123456789'
const shared = redisForTestFile()
let prefixes = 0

/** Two relay instances on their own ports over one Redis (a fresh prefix per test), and the sink they share. */
async function relays(options: Partial<RelayOptions> = {}) {
  const recorded = recordingSink()
  const prefix = `attack${++prefixes}:`
  const make = () =>
    createRelay({
      keys: ['SHOP_A', 'SHOP_B'],
      sink: recorded.sink,
      store: redisStore(shared.client(), { prefix }),
      serverSecrets: [SECRET],
      trustProxy: 1,
      bots: 'keep',
      ...options
    })
  const started = [await serve(toNodeHandler(make())), await serve(toNodeHandler(make()))]
  shared.servers.push(...started)
  return { recorded, urls: started.map((server) => server.origin + '/df/events'), prefix }
}

const post = async (url: string, body: unknown, headers: Record<string, string> = {}) => {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'text/plain;charset=UTF-8', ...headers }, body: JSON.stringify(body) })
  return { status: response.status, headers: response.headers, body: await response.json() }
}

let counter = 0
const click = (user = { uid: 'shopper-1', sid: 'session-1' }, key = 'SHOP_A') => ({
  event: 'click-item',
  properties: { item_id: 'item-' + ++counter, variant_item_id: 'v' },
  key,
  t_client: Date.now(),
  user,
  event_id: 'page.' + counter
})
const purchase = (key: string, orderId: string, revenue: number, user = { uid: 'shopper-1', sid: 'session-1' }) => ({
  event: 'purchase',
  properties: { order_id: orderId, currency: 'EUR', revenue, line_items: [{ item_id: '42', variant_item_id: '421', unit_price: revenue, quantity: 1 }] },
  key,
  t_client: Date.now(),
  user,
  event_id: orderEventId(key, orderId)
})
const revenues = (events: RelayEvent[]) => events.filter((event) => event.event == 'purchase').map((event) => (event.properties as { revenue: number }).revenue)

describe('a forged purchase', () => {
  it('does not keep the real one from the sink: both stored, the real one marked as a conflict; a reload of the real page is a duplicate', async () => {
    const { recorded, urls } = await relays()
    // The forger computes order 1001's id and claims it first, with revenue 0.01.
    expect((await post(urls[0], [purchase('SHOP_A', '1001', 0.01, { uid: 'forger', sid: 'f' })])).body).toMatchObject({ accepted: 1 })
    // The shop's real confirmation page, through the other instance.
    expect((await post(urls[1], [purchase('SHOP_A', '1001', 499)])).body).toMatchObject({ accepted: 1, duplicates: 0 })
    expect(revenues(recorded.events())).toEqual([0.01, 499])
    expect(recorded.events()[1]).toMatchObject({ order_conflict: true })
    // The shopper reloads the confirmation page: the same purchase, stored once; and the shop's
    // own call on that page, which says less than the GA4 bridge did, is the same purchase too.
    expect((await post(urls[0], [purchase('SHOP_A', '1001', 499)])).body).toMatchObject({ accepted: 0, duplicates: 1 })
    const sameShopper = purchase('SHOP_A', '1001', 499)
    expect((await post(urls[1], [{ ...sameShopper, properties: { ...sameShopper.properties, line_items: [] } }])).body).toMatchObject({
      accepted: 0,
      duplicates: 1
    })
    expect(revenues(recorded.events())).toEqual([0.01, 499])
  })

  it("is one purchase when one shopper's page sends two that differ in one request (the page's own call and the GA4 bridge)", async () => {
    const { recorded, urls } = await relays()
    const bridge = purchase('SHOP_A', '1005', 80)
    const direct = { ...bridge, properties: { ...bridge.properties, line_items: [] } }
    expect((await post(urls[0], [bridge, direct])).body).toMatchObject({ accepted: 1, duplicates: 1 })
    expect(recorded.events()).toHaveLength(1)
  })

  it("of one shop's order never makes another shop's order a duplicate", async () => {
    const { recorded, urls } = await relays()
    // Shop A's purchase carrying shop B's order id is stored as shop A's own order: a purchase's id is its order's.
    const forged = { ...purchase('SHOP_A', '1001', 5), event_id: orderEventId('SHOP_B', '1001') }
    expect((await post(urls[0], [forged])).body).toMatchObject({ accepted: 1, duplicates: 0 })
    expect(recorded.events()[0].event_id).toBe(orderEventId('SHOP_A', '1001'))
    expect((await post(urls[1], [purchase('SHOP_B', '1001', 499)])).body).toMatchObject({ accepted: 1, duplicates: 0 })
    expect(revenues(recorded.events())).toEqual([5, 499])
    expect(recorded.events()[1]).not.toHaveProperty('order_conflict')
  })

  it("loses to the shop's server sender: its purchase is stored, and a page's purchase after it is a duplicate", async () => {
    const { recorded, urls } = await relays()
    await post(urls[0], [purchase('SHOP_A', '2002', 0.01, { uid: 'forger', sid: 'f' })])
    // The order webhook, through the server sender with the secret.
    const server = createServerTracker({ key: 'SHOP_A', endpoint: urls[1], secret: SECRET, flushInterval: 0 })
    const order = purchase('SHOP_A', '2002', 499)
    server.track('purchase', order.properties as never, { uid: 'shopper-1', sid: 'session-1', ip: '198.51.100.23', ua: 'Mozilla/5.0 (iPhone)' })
    await server.close()
    const stored = recorded.events()
    expect(revenues(stored)).toEqual([0.01, 499])
    expect(stored[1]).toMatchObject({ from_server: true, order_conflict: true, user: { ip: '198.51.100.23', ua: 'Mozilla/5.0 (iPhone)' } })
    // Another forged copy, and the shop's own page, after the server spoke: duplicates.
    expect((await post(urls[0], [purchase('SHOP_A', '2002', 1, { uid: 'forger', sid: 'f' })])).body).toMatchObject({ accepted: 0, duplicates: 1 })
    expect((await post(urls[1], [purchase('SHOP_A', '2002', 499)])).body).toMatchObject({ accepted: 0, duplicates: 1 })
    expect(revenues(recorded.events())).toEqual([0.01, 499])
  })
})

describe('an address planted in the body', () => {
  it('is ignored from a page behind the trusted proxy, and kept from the authenticated server sender', async () => {
    const { recorded, urls } = await relays()
    const planted = { ...click(), user: { uid: 'shopper-1', sid: 'session-1', ip: '8.8.8.8', ua: 'Planted/1.0' } }
    await post(urls[0], [planted], { 'x-forwarded-for': '203.0.113.5', 'user-agent': 'Mozilla/5.0 Shopper' })
    expect(recorded.events()[0].user).toMatchObject({ ip: '203.0.113.5', ua: 'Mozilla/5.0 Shopper' })
    const server = createServerTracker({ key: 'SHOP_A', endpoint: urls[1], secret: SECRET, flushInterval: 0 })
    server.track(
      'click-item',
      { item_id: '42', variant_item_id: '421' },
      { uid: 'shopper-1', sid: 'session-1', ip: '198.51.100.23', ua: 'Mozilla/5.0 (iPhone)' }
    )
    await server.close()
    expect(recorded.events()[1].user).toMatchObject({ ip: '198.51.100.23', ua: 'Mozilla/5.0 (iPhone)' })
    expect(recorded.events()[1]).toMatchObject({ from_server: true })
  })

  it('cannot hide behind a quote left open in Forwarded: the trusted proxy’s element is read', async () => {
    const { recorded, urls } = await relays({ proxyHeader: 'forwarded' })
    await post(urls[0], [click()], { forwarded: 'for="9.9.9.9, , for="198.51.100.7:4711"' })
    expect(recorded.events()[0].user.ip).toBe('198.51.100.7')
  })
})

describe('a flood', () => {
  beforeEach(() => {
    counter = 0
  })

  it('is answered 429 with Retry-After once its address used its bucket, while other shoppers’ events keep flowing; nothing is stored twice', async () => {
    const { recorded, urls, prefix } = await relays({ rateLimit: { burst: 600, perSecond: 1 } })
    const flooder = { 'x-forwarded-for': '203.0.113.66' }
    const answers = []
    // Each request claims 300 new ids: two pass, the third finds the bucket empty, at either instance.
    for (let round = 0; round < 4; round++) {
      answers.push(
        await post(
          urls[round % 2],
          Array.from({ length: 300 }, () => click({ uid: 'flood', sid: 'f' })),
          flooder
        )
      )
    }
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 429, 429])
    expect(Number(answers[2].headers.get('retry-after'))).toBeGreaterThan(0)
    expect(answers[2].body.error.message).toMatch(/^too many events from this address: come back in \d+ s$/)
    // Another shopper, meanwhile, through both instances.
    const theirs = [click(), click()]
    expect((await post(urls[0], [theirs[0]], { 'x-forwarded-for': '198.51.100.10' })).status).toBe(200)
    expect((await post(urls[1], [theirs[1]], { 'x-forwarded-for': '198.51.100.10' })).status).toBe(200)
    // What was delivered, sent again by the flood's address later, is not stored twice.
    expect([...recorded.counts().values()].every((count) => count == 1)).toBe(true)
    expect(recorded.events()).toHaveLength(602)
    // The store holds the ids of what was taken, and nothing of what was refused.
    const keys = (await shared.client().sendCommand(['KEYS', prefix + '{df}:*'])) as string[]
    expect(keys).toHaveLength(602)
  })
})

describe('?unconfirmed=', () => {
  it('tells another uid nothing of an order: every id it asks about is missing, arrived or not', async () => {
    const { urls } = await relays()
    const real = purchase('SHOP_A', '3003', 80)
    await post(urls[0], [real], { cookie: 'df_uid=shopper-1' })
    const asked = urls[1] + '?unconfirmed=' + real.event_id + ',' + orderEventId('SHOP_A', '3004')
    expect((await post(asked, [], { cookie: 'df_uid=competitor' })).body.missing).toEqual([real.event_id, orderEventId('SHOP_A', '3004')])
    expect((await post(asked, [], { cookie: 'df_uid=shopper-1' })).body.missing).toEqual([orderEventId('SHOP_A', '3004')])
  })
})
