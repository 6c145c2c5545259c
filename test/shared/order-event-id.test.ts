import { afterEach, describe, expect, it, vi } from 'vitest'
import { createServerTracker } from '../../src/server'
import { fnv1a64, orderEventId } from '../../src/shared/order-event-id'
import { isolateEachTest, make, network } from '../support/helpers'

const order = {
  order_id: '5512345678901',
  currency: 'EUR',
  revenue: 19.9,
  line_items: [{ item_id: '42', variant_item_id: '421', unit_price: 19.9, quantity: 1 }]
}

describe('orderEventId', () => {
  it('is FNV-1a 64 (the reference values of the FNV specification)', () => {
    expect(fnv1a64('')).toBe(0xcbf29ce484222325n)
    expect(fnv1a64('a')).toBe(0xaf63dc4c8601ec8cn)
    expect(fnv1a64('foobar')).toBe(0x85944171f73967e8n)
  })

  it('is the same for the same key and order, and differs for another order or another merchant', () => {
    const id = orderEventId('KEY', '1001')
    expect(orderEventId('KEY', '1001')).toBe(id)
    expect(id).toMatch(/^order\.[0-9a-z]{1,13}$/)
    expect(orderEventId('KEY', '1002')).not.toBe(id)
    // Shopify numbers every shop's orders from 1001: two merchants on one collector must not share an id.
    expect(orderEventId('OTHER', '1001')).not.toBe(id)
    // The key and the order id never run together into another pair's.
    expect(orderEventId('ab', 'c')).not.toBe(orderEventId('a', 'bc'))
    expect(orderEventId('KEY', 'ö'.repeat(500)).length).toBeLessThanOrEqual(64)
  })

  // The contract across releases: a confirmation page reloaded after an upgrade, or a pixel and
  // a server of different versions, must name the same order alike, or the collector stores the
  // purchase twice. These values were computed once (and checked against an FNV-1a 64 written
  // apart from this code); any change to the separator, the hash or the base-36 text breaks them.
  it.each([
    ['KEY', '1001', 'order.2r3pjj8s5lpbd'],
    ['KEY', '5512345678901', 'order.7wkeknl7lttn'],
    ['OTHER', '1001', 'order.2kszbbm1ieu7u'],
    ['demo-key', 'o-1', 'order.3qurpvm5sirx1'],
    // Non-ASCII order ids are hashed as their UTF-8 bytes.
    ['KEY', 'Bestellung-Ä-ö-ü-ß-日本-🛒', 'order.2bozpq251360l'],
    // A long key (64 characters) with a Shopify order GID.
    ['0123456789abcdef'.repeat(4), 'gid://shopify/Order/5512345678901', 'order.2twhzg3impjgl']
  ])('stays the same across releases: key %s, order %s → %s', (key, orderId, id) => {
    expect(orderEventId(key, orderId)).toBe(id)
  })
})

describe('one event id per order, in every sender', () => {
  isolateEachTest()
  afterEach(() => vi.unstubAllGlobals())

  it('the thank-you page’s purchase(), tracked twice (a reload), and the Node sender’s carry the same event_id', async () => {
    const net = network()
    const tracker = make()
    tracker.purchase(order)
    tracker.purchase(order)
    await tracker.flush()
    const fromPage = net.events().map((event) => event.event_id)
    expect(fromPage).toEqual([orderEventId('KEY', order.order_id), orderEventId('KEY', order.order_id)])

    vi.useRealTimers()
    const bodies: string[] = []
    vi.stubGlobal('fetch', async (_url: string, init: RequestInit) => {
      bodies.push(init.body as string)
      return new Response('{}', { status: 200 })
    })
    const server = createServerTracker({ key: 'KEY', endpoint: 'https://collector.example/v3/feedback' })
    server.track('purchase', order, { uid: 'u1', sid: 's1', ip: '203.0.113.9', ua: 'Mozilla/5.0' })
    server.track('update-cart', { line_items: [] }, { uid: 'u1', sid: 's1', ip: '203.0.113.9', ua: 'Mozilla/5.0' })
    await server.flush()
    const [purchase, cart] = JSON.parse(bodies[0])
    expect(purchase.event_id).toBe(fromPage[0])
    // Other events keep ids of their own.
    expect(cart.event_id).not.toMatch(/^order\./)
  })
})
