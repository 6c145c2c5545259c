// @vitest-environment node
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { waitFor } from '../support/wait'
import { readFeed } from '../support/feed'
import { startInspect } from '../../src/collector'
import { createServerTracker } from '../../src/server'
// @ts-expect-error plain ES module without types
import { startDemo } from '../../demo/server.mjs'

// The inspector's lints and charts as an integrator reads them from its feed: crafted envelopes
// posted to the collector over HTTP, each lint caught on the event that deserves it.
type Started = { url: string; inspectorToken: string; close: () => Promise<void> }
const running: Started[] = []
const dataFile = () => join(mkdtempSync(join(tmpdir(), 'inspector-')), 'events.ndjson')

async function demo(options: Record<string, unknown> = {}): Promise<Started> {
  const started = await startDemo({ port: 0, dataFile: dataFile(), ...options })
  running.push(started)
  return started
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((started) => started.close()))
})

type Lint = { code: string; text: string }
type Message = { type: string; envelope: any; error?: string; lints: Lint[] }

/** Reads the inspector's feed: collector messages with their lints, and the charts' stats. */
async function feed(started: Started) {
  const reader = await readFeed(started.url, started.inspectorToken)
  running.push({ url: '', inspectorToken: '', close: async () => reader.close() })
  return { messages: reader.messages as Message[], stats: reader.stats, latest: () => reader.stats[reader.stats.length - 1] }
}

let counter = 0
const SESSION = { uid: 'uid-1', sid: 'sid-1' }
const envelope = (event: string, properties: Record<string, unknown>, overrides: Record<string, unknown> = {}) => ({
  event,
  properties,
  key: 'demo-key',
  t_client: Date.now(),
  user: SESSION,
  event_id: 'evt-' + ++counter,
  ...overrides
})

/** Posts envelopes as the library does (with t_sent), and resolves with their feed messages and lints. */
async function send(started: Started, reader: Awaited<ReturnType<typeof feed>>, envelopes: unknown[], query = '?t_sent=' + Date.now()) {
  const before = reader.messages.length
  const response = await fetch(started.url + '/v3/feedback' + query, { method: 'POST', body: JSON.stringify(envelopes) })
  expect(response.status).toBeLessThan(500)
  await waitFor(() => reader.messages.length >= before + envelopes.length, 'the feed')
  return reader.messages.slice(before)
}
const codes = (messages: Message[]) => messages.map((message) => message.lints.map((lint) => lint.code))

/** A discovery answer's rid, for `user`, as the demo server answers a shop's page. */
async function rid(started: Started, route: string, user: object = SESSION) {
  const response = await fetch(started.url + route, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-key': 'demo-key' },
    body: JSON.stringify({ user, t_client: Date.now(), q: 'shirt', limit: 4 })
  })
  return (await response.json()).meta.rid as string
}

const line = (item_id: string, unit_price: number, quantity = 1) => ({ item_id, variant_item_id: item_id + '-1', unit_price, quantity })

describe('lints, each on the event that deserves it', () => {
  it('a clean integration is quiet: rids of this session, add-to-cart after its click-item, a purchase that adds up', async () => {
    const started = await demo()
    const reader = await feed(started)
    const shelf = await rid(started, '/v3/recommend/items/1003/viewed/viewed')
    const suggestions = await rid(started, '/v3/autocomplete')
    const messages = await send(started, reader, [
      envelope('view-page', { url: 'http://shop.example/', ref: '', width: 1280, height: 800 }),
      envelope('view-page', { url: 'http://shop.example/products/1003', ref: '', width: 1280, height: 800, item_id: '1003', variant_item_id: '1003-1' }),
      envelope('click-suggestion', { rid: suggestions, suggestion: 'shirt' }),
      // The library's order: the click-item first, then its add-to-cart.
      envelope('click-item', { rid: shelf, item_id: '1004', variant_item_id: '1004-1' }),
      envelope('add-to-cart', { rid: shelf, item_id: '1004', variant_item_id: '1004-1', quantity: 1 }),
      // Prices with VAT included, as the demo store's: revenue is items + shipping.
      envelope('purchase', { order_id: 'o-1', currency: 'EUR', revenue: 44.9, total_tax: 7.17, total_shipping: 4.9, line_items: [line('1004', 20, 2)] }),
      // Tax on top, and a discount.
      envelope('purchase', {
        order_id: 'o-2',
        currency: 'EUR',
        revenue: 43.8,
        total_tax: 3.8,
        total_discount: 5,
        total_shipping: 5,
        line_items: [line('1004', 20, 2)]
      })
    ])
    expect(codes(messages)).toEqual([[], [], [], [], [], [], []])
    await waitFor(() => reader.latest()?.funnel[0]?.purchases == 2, 'the funnel')
    expect(reader.latest().lints).toEqual({})
  })

  it('a rid this server never returned, and one it returned to another session', async () => {
    const started = await demo()
    const reader = await feed(started)
    const theirs = await rid(started, '/v3/autocomplete', { uid: 'uid-2', sid: 'sid-2' })
    // The same uid in another session: a rid of that session's.
    const otherSession = await rid(started, '/v3/recommend/items/newest', { uid: SESSION.uid, sid: 'sid-2' })
    const mine = await rid(started, '/v3/recommend/items/newest')
    const messages = await send(started, reader, [
      envelope('click-item', { rid: 's-00000000-0000-4000-8000-000000000000', item_id: '1', variant_item_id: '1-1' }),
      envelope('click-suggestion', { rid: theirs, suggestion: 'shirt' }),
      // The shop's own listing sends click-item without a rid (SPEC): nothing to check.
      envelope('click-item', { item_id: '1', variant_item_id: '1-1' }),
      envelope('click-item', { rid: mine, item_id: '1', variant_item_id: '1-1' }),
      envelope('click-item', { rid: otherSession, item_id: '1', variant_item_id: '1-1' })
    ])
    expect(codes(messages)).toEqual([['rid-unknown'], ['rid-session'], [], [], ['rid-session']])
    expect(messages[0].lints[0].text).toBe('rid s-00000000-0000-4000-8000-000000000000 never returned by a discovery response seen here')
  })

  it('an add-to-cart without its click-item, or with one too long before', async () => {
    const started = await demo()
    const reader = await feed(started)
    const shelf = await rid(started, '/v3/recommend/slot-1')
    const now = Date.now()
    const messages = await send(started, reader, [
      envelope('add-to-cart', { rid: shelf, item_id: '7', variant_item_id: '7-1', quantity: 1 }),
      envelope('click-item', { rid: shelf, item_id: '8', variant_item_id: '8-1' }, { t_client: now - 61000 }),
      envelope('add-to-cart', { rid: shelf, item_id: '8', variant_item_id: '8-1', quantity: 1 }, { t_client: now }),
      // Another item's click does not count either.
      envelope('click-item', { rid: shelf, item_id: '9', variant_item_id: '9-1' }),
      envelope('add-to-cart', { rid: shelf, item_id: '10', variant_item_id: '10-1', quantity: 1 })
    ])
    expect(codes(messages)).toEqual([['cart-without-click'], [], ['cart-without-click'], [], ['cart-without-click']])
  })

  it('a purchase whose revenue is far from its line items after tax, shipping and discount', async () => {
    const started = await demo()
    const reader = await feed(started)
    const order = { order_id: 'o-1', currency: 'EUR', total_tax: 7.6, total_shipping: 5, total_discount: 2, line_items: [line('1', 19.99, 2)] }
    const messages = await send(started, reader, [
      // Revenue in cents instead of units. Four orders: a purchase's id is its order's.
      envelope('purchase', { ...order, order_id: 'o-1', revenue: 4958 }),
      // Shipping forgotten: 39.98 + 7.60 − 2 = 45.58.
      envelope('purchase', { ...order, order_id: 'o-2', revenue: 45.58 }),
      // Within the tolerance: 1 % of 50.58.
      envelope('purchase', { ...order, order_id: 'o-3', revenue: 50.9 }),
      envelope('purchase', { ...order, order_id: 'o-4', revenue: 43 })
    ])
    expect(codes(messages)).toEqual([['revenue'], ['revenue'], [], []])
    expect(messages[0].lints[0].text).toBe('revenue 4958.00 is far from line items 39.98 + shipping 5.00 − discount 2.00 = 42.98 (50.58 with tax added)')
  })

  it('a product page view-page without item_id, by the default pattern and by a configured one', async () => {
    const started = await demo()
    const reader = await feed(started)
    const view = (url: string, more = {}) => envelope('view-page', { url, ref: '', width: 1, height: 1, ...more })
    const messages = await send(started, reader, [
      view('https://shop.example/products/blue-shirt'),
      view('https://shop.example/product/1003'),
      view('https://shop.example/product/1003', { item_id: '1003', variant_item_id: '1003-1' }),
      view('https://shop.example/p/1003'),
      view('https://shop.example/cart'),
      // The path counts, not a query that mentions a product page.
      view('https://shop.example/login?next=/products/blue-shirt')
    ])
    expect(codes(messages)).toEqual([['product-view'], ['product-view'], [], [], [], []])

    const custom = await demo({ productUrl: /\/p\/\d+$/ })
    const customReader = await feed(custom)
    const customMessages = await send(custom, customReader, [view('https://shop.example/p/1003'), view('https://shop.example/products/x')])
    expect(codes(customMessages)).toEqual([['product-view'], []])
  })

  it('clock skew: a t_sent far from the receive time, or without t_sent a t_client far from it', async () => {
    const started = await demo()
    const reader = await feed(started)
    const now = Date.now()
    const behind = await send(
      started,
      reader,
      [envelope('view-page', { url: 'http://s/', ref: '', width: 1, height: 1 }, { t_client: now - 600000 })],
      '?t_sent=' + (now - 600000)
    )
    expect(behind[0].lints).toEqual([{ code: 'clock-skew', text: 'the device clock is 10 min behind (t_sent against the receive time)' }])
    // An event tracked on an earlier visit and sent now is late, not skewed.
    const late = await send(started, reader, [envelope('view-page', { url: 'http://s/', ref: '', width: 1, height: 1 }, { t_client: now - 86400000 })])
    expect(codes(late)).toEqual([[]])
    const unsent = await send(started, reader, [envelope('view-page', { url: 'http://s/', ref: '', width: 1, height: 1 }, { t_client: now + 300000 })], '')
    expect(codes(unsent)).toEqual([['clock-skew']])
    expect(unsent[0].lints[0].text).toMatch(/^t_client is 5 min after the receive time/)
    // Within a minute: quiet, either way.
    expect(
      codes(await send(started, reader, [envelope('view-page', { url: 'http://s/', ref: '', width: 1, height: 1 }, { t_client: now - 50000 })], ''))
    ).toEqual([[]])
  })

  it('an event_id seen twice, and a rejected envelope counted with its error', async () => {
    const started = await demo()
    const reader = await feed(started)
    const twice = envelope('view-page', { url: 'http://s/', ref: '', width: 1, height: 1 })
    await send(started, reader, [twice])
    const messages = await send(started, reader, [twice, { event: 'click-item', key: 'demo-key' }])
    expect(messages.map((message) => message.type)).toEqual(['duplicate', 'rejected'])
    expect(codes(messages)).toEqual([['duplicate'], ['rejected']])
    expect(messages[1].lints[0].text).toBe('click-item: properties must be an object, got undefined')
    await waitFor(() => reader.latest()?.lints.rejected == 1, 'the lint counts')
    expect(reader.latest().lints).toEqual({ duplicate: 1, rejected: 1 })
  })
})

describe('charts', () => {
  it('count the funnel per session and click-through per rid family', async () => {
    const started = await demo()
    const reader = await feed(started)
    const searches = [await rid(started, '/v3/search/content'), await rid(started, '/v3/search/content')]
    const collection = await rid(started, '/v3/smart-collection/sale')
    await rid(started, '/v3/autocomplete')
    const other = { user: { uid: 'uid-2', sid: 'sid-2' } }
    await send(started, reader, [
      envelope('view-page', { url: 'http://s/', ref: '', width: 1, height: 1 }),
      envelope('click-item', { rid: searches[0], item_id: '1', variant_item_id: '1-1' }),
      envelope('click-item', { rid: collection, item_id: '2', variant_item_id: '2-1' }),
      envelope('add-to-cart', { rid: collection, item_id: '2', variant_item_id: '2-1', quantity: 1 }),
      envelope('view-page', { url: 'http://s/', ref: '', width: 1, height: 1 }, other)
    ])
    await waitFor(() => reader.latest()?.funnel.length == 2, 'both sessions')
    const { funnel, clickThrough, seesDiscovery } = reader.latest()
    expect(seesDiscovery).toBe(true)
    // Last active first.
    expect(funnel).toEqual([
      { uid: 'uid-2', sid: 'sid-2', views: 1, clicks: 0, carts: 0, purchases: 0 },
      { uid: 'uid-1', sid: 'sid-1', views: 1, clicks: 2, carts: 1, purchases: 0 }
    ])
    expect(clickThrough).toEqual([
      { prefix: 'a', family: 'autocomplete', clicks: 0, responses: 1 },
      { prefix: 's', family: 'search', clicks: 1, responses: 2 },
      { prefix: 'c', family: 'collection', clicks: 1, responses: 1 },
      { prefix: 'r', family: 'recommendation', clicks: 0, responses: 0 }
    ])
  })
})

describe('the collector and inspector alone', () => {
  it('see no discovery responses, so they check only the shape of a rid', async () => {
    const started: Started = await startInspect({ port: 0, dataFile: dataFile() })
    running.push(started)
    const reader = await feed(started)
    const messages = await send(started, reader, [
      envelope('click-item', { rid: 's-6f1c2a9e-3b7d-4e55-9a0b-2c4d6e8f0a1b', item_id: '1', variant_item_id: '1-1' }),
      envelope('click-item', { rid: '1003', item_id: '1', variant_item_id: '1-1' })
    ])
    expect(codes(messages)).toEqual([[], ['rid-shape']])
    await waitFor(() => reader.latest()?.clickThrough[1].clicks == 1, 'the click-through')
    expect(reader.latest().seesDiscovery).toBe(false)
  })
})

describe('orders by who reported them', () => {
  it("counts the orders the browser alone reported, those only the shop's server did, and those both did, with the copies that differed", async () => {
    const started: Started = await startInspect({ port: 0, dataFile: dataFile(), keys: ['demo-key'] })
    running.push(started)
    const reader = await feed(started)
    const order = (order_id: string, revenue = 40) => ({ order_id, currency: 'EUR', revenue, line_items: [line('1004', 20, 2)] })
    const server = createServerTracker({ key: 'demo-key', endpoint: started.url + '/v3/feedback', flushInterval: 0 })
    const shopper = { ...SESSION, ip: '203.0.113.5', ua: 'Mozilla/5.0 (iPhone)' }
    // o-1: the page only. o-2: the server only, as an order webhook sends it. o-3: the page, then the server with another revenue.
    await send(started, reader, [envelope('purchase', order('o-1')), envelope('purchase', order('o-3'))])
    server.track('purchase', order('o-2'), shopper)
    server.track('purchase', order('o-3', 40.01), shopper)
    await server.close()
    expect(server.stats()).toMatchObject({ sent: 2 })
    await waitFor(() => reader.latest()?.orders.both == 1, 'the coverage')
    expect(reader.latest().orders).toEqual({ browserOnly: 1, serverOnly: 1, both: 1, differing: 1 })
  })
})
