// @vitest-environment node
// Shopify's order webhooks through a relay, over real HTTP, with Shopify's own documented
// orders/create example (fixtures/README.md) signed as Shopify signs it: what is refused and
// what is answered without sending, each order one purchase at the sink with every field, its
// event id the pixel's, the shopper's ids, and the orders the page and the webhook both report
// counted once.
import { request as httpRequest } from 'node:http'
import { describe, expect, it } from 'vitest'
import { redisStore } from '../../src/relay'
import { orderEventId } from '../../src/shared/order-event-id'
import { redisForTestFile } from '../relay/redis-server'
import { createMapping } from '../../src/shopify/events'
import { edited, KEY, metric, postPage, postShopify, purchasesOf, SHOPIFY_EXAMPLE, SHOPIFY_ORDER, SHOPIFY_SECRET, sign, startShop } from './webhook-support'

const ORDER_ID = '820982911946154508'
const PRODUCT = '788032119674292922'
// The storefront's ids, as the cart attribute writer puts them into the cart and Shopify copies them into the order.
const SHOPPER = { uid: 'V1StGXR8_Z5jdHi6B-myT', sid: 'k3j5h2g7f8d9s0a1q2w3e' }
const withShopper = (body = SHOPIFY_ORDER) =>
  edited(body, ['"note_attributes": []', `"note_attributes": [{"name": "_df_uid", "value": "${SHOPPER.uid}"}, {"name": "_df_sid", "value": "${SHOPPER.sid}"}]`])
// The purchase Shopify's example is, as SPEC has it: the lines of products (two of its five have none), amounts in the presentment currency.
const EXAMPLE_PURCHASE = {
  order_id: ORDER_ID,
  currency: 'USD',
  revenue: 404.95,
  total_tax: 0,
  total_shipping: 10,
  total_discount: 20,
  line_items: [
    { item_id: PRODUCT, variant_item_id: PRODUCT, unit_price: 89.99, quantity: 1 },
    { item_id: PRODUCT, variant_item_id: PRODUCT, unit_price: 159.99, quantity: 1 },
    { item_id: PRODUCT, variant_item_id: PRODUCT, unit_price: 119.99, quantity: 1 }
  ]
}

describe('shopifyOrderWebhook', () => {
  it('answers a missing or a wrong signature 401 and sends nothing', async () => {
    const shop = await startShop()
    const missing = await postShopify(shop.shopifyUrl, SHOPIFY_ORDER, { signature: null })
    const wrongSecret = await postShopify(shop.shopifyUrl, SHOPIFY_ORDER, { signature: sign('another-secret', SHOPIFY_ORDER) })
    const otherBody = await postShopify(shop.shopifyUrl, SHOPIFY_ORDER, { signature: sign(SHOPIFY_SECRET, SHOPIFY_ORDER + ' ') })
    const notBase64 = await postShopify(shop.shopifyUrl, SHOPIFY_ORDER, { signature: 'not base64!' })
    for (const answer of [missing, wrongSecret, otherBody, notBase64]) {
      expect(answer).toEqual({
        status: 401,
        body: { error: { message: expect.stringContaining("x-shopify-hmac-sha256 is missing, or is not the body's signature") } }
      })
    }
    await shop.tracker.flush()
    expect(shop.recorded.events()).toEqual([])
    expect(shop.tracker.stats()).toMatchObject({ sent: 0, queued: 0 })
  })

  it('answers a topic that makes no purchase 200, and sends nothing', async () => {
    const shop = await startShop()
    for (const topic of ['orders/updated', 'orders/cancelled', 'products/create']) {
      expect(await postShopify(shop.shopifyUrl, SHOPIFY_ORDER, { topic })).toEqual({
        status: 200,
        body: { delivered: false, reason: topic + ' is not a topic that makes a purchase here (orders/create, orders/paid)' }
      })
    }
    await shop.tracker.flush()
    expect(shop.recorded.events()).toEqual([])
  })

  it('answers a test order, and a cancelled or voided one, 200, and sends nothing: the documented example is all three', async () => {
    const shop = await startShop()
    const voided = edited(SHOPIFY_ORDER, ['"financial_status": "paid"', '"financial_status": "voided"'])
    const cancelled = edited(SHOPIFY_ORDER, ['"cancelled_at": null', '"cancelled_at": "2021-12-31T19:00:00-05:00"'])
    expect(await postShopify(shop.shopifyUrl, SHOPIFY_EXAMPLE)).toEqual({
      status: 200,
      body: { delivered: false, reason: 'a test order (test: true) makes no purchase' }
    })
    for (const body of [voided, cancelled])
      expect(await postShopify(shop.shopifyUrl, body)).toEqual({
        status: 200,
        body: { delivered: false, reason: 'a cancelled or voided order makes no purchase' }
      })
    await shop.tracker.flush()
    expect(shop.recorded.events()).toEqual([])
  })

  it('gives up a body that trickles: 408 after 10 s, nothing sent', async () => {
    const shop = await startShop()
    const started = Date.now()
    const status = await new Promise<number>((resolve, reject) => {
      const slow = httpRequest(shop.shopifyUrl, { method: 'POST', headers: { 'content-length': '1000', 'x-shopify-topic': 'orders/create' } }, (answer) => {
        answer.resume()
        resolve(answer.statusCode!)
      })
      slow.on('error', reject)
      // A tenth of the body, and never the rest.
      slow.write('{"id": 1, '.padEnd(100))
    })
    expect(status).toBe(408)
    expect(Date.now() - started).toBeGreaterThanOrEqual(9500)
    await shop.tracker.flush()
    expect(shop.recorded.events()).toEqual([])
  }, 20000)

  it('answers a body that is no order 400, naming what is wrong, and sends nothing', async () => {
    const shop = await startShop()
    const cases: [string, string][] = [
      ['{"id": 1, "total_price": ', 'orders/create: the body is not an order in JSON: '],
      ['[1, 2]', 'orders/create: the body must be an order (a JSON object)'],
      [
        edited(SHOPIFY_ORDER, ['"total_price": "404.95"', '"total_price": null'], ['"total_price_set"', '"former_total_price_set"']),
        'orders/create: total_price is required'
      ],
      [
        edited(SHOPIFY_ORDER, ['"quantity": 1,\n      "requires_shipping"', '"quantity": "one",\n      "requires_shipping"']),
        'orders/create: line_items[0].quantity must be a whole number of 1 or more'
      ],
      [
        edited(SHOPIFY_ORDER, [
          '"presentment_money": {\n      "amount": "404.95",\n      "currency_code": "USD"\n    }\n  },\n  "total_shipping',
          '"presentment_money": {\n      "amount": "404,95",\n      "currency_code": "USD"\n    }\n  },\n  "total_shipping'
        ]),
        'orders/create: total_price_set.presentment_money.amount must be an amount'
      ],
      [
        edited(SHOPIFY_ORDER, ['"presentment_currency": "USD"', '"presentment_currency": ""']),
        'orders/create: presentment_currency must be a non-empty string'
      ],
      [edited(SHOPIFY_ORDER, ['"note_attributes": []', '"note_attributes": "none"']), 'orders/create: note_attributes must be a list of objects']
    ]
    for (const [body, message] of cases) {
      const answer = await postShopify(shop.shopifyUrl, body)
      expect(answer.status, message).toBe(400)
      expect(answer.body.error.message).toContain('discovery-feedback: ' + message)
    }
    await shop.tracker.flush()
    expect(shop.recorded.events()).toEqual([])
  })

  it("makes Shopify's documented example one purchase at the sink, every id to the digit, its event id the pixel's", async () => {
    const shop = await startShop()
    expect(await postShopify(shop.shopifyUrl, SHOPIFY_ORDER)).toEqual({ status: 200, body: { delivered: true, order_id: ORDER_ID } })
    const [purchase, ...more] = purchasesOf(shop.recorded, ORDER_ID)
    expect(more).toEqual([])
    expect(purchase.properties).toEqual(EXAMPLE_PURCHASE)
    expect(purchase).toMatchObject({ key: KEY, from_server: true })
    // The pixel's purchase of the same order (its checkout's order id is a global id of it).
    const pixel = createMapping().purchaseOf(
      { order: { id: 'gid://shopify/OrderIdentity/' + ORDER_ID }, currencyCode: 'USD', totalPrice: { amount: 404.95 }, lineItems: [] } as never,
      () => {}
    )
    expect(purchase.event_id).toBe(orderEventId(KEY, pixel.order_id))
    // Without the storefront's ids: a uid from the customer, a sid from the order, keyed with the
    // webhook's secret so that no page can name them beforehand, within SPEC's 32 characters.
    expect(purchase.user.uid).toMatch(/^shopify-c-[0-9a-z]+$/)
    expect(purchase.user.sid).toMatch(/^shopify-s-[0-9a-z]+$/)
    expect(purchase.user.uid).not.toContain('115310627314723954')
    expect(purchase.user.uid.length).toBeLessThanOrEqual(32)
  })

  it("takes the shopper's uid and sid from the order's note_attributes, and the browser's ip and user agent from the order", async () => {
    const shop = await startShop()
    const body = edited(
      withShopper(),
      ['"browser_ip": null', '"browser_ip": "203.0.113.9"'],
      ['"client_details": null', '"client_details": {"user_agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X)", "browser_ip": "203.0.113.9"}']
    )
    expect((await postShopify(shop.shopifyUrl, body)).status).toBe(200)
    expect(purchasesOf(shop.recorded, ORDER_ID)).toEqual([
      expect.objectContaining({ user: { ...SHOPPER, ip: '203.0.113.9', ua: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X)' } })
    ])
  })

  it("derives the same uid, of at most 32 characters, for every delivery of an order without the storefront's ids, a guest's from the order", async () => {
    const shop = await startShop()
    const guest = edited(SHOPIFY_ORDER, ['"customer": {\n    "id": 115310627314723954,', '"customer": {\n    "id": null,'])
    expect((await postShopify(shop.shopifyUrl, guest, { topic: 'orders/create' })).status).toBe(200)
    expect((await postShopify(shop.shopifyUrl, guest, { topic: 'orders/paid' })).status).toBe(200)
    const [purchase, ...more] = purchasesOf(shop.recorded, ORDER_ID)
    expect(more).toEqual([])
    expect(purchase.user.uid).toMatch(/^shopify-o-[0-9a-z]+$/)
    expect(purchase.user.uid).not.toContain(ORDER_ID)
    expect(purchase.user.uid.length).toBeLessThanOrEqual(32)
    // The same for every delivery: another handler with the same secret derives it again.
    const again = await startShop()
    expect((await postShopify(again.shopifyUrl, guest, { topic: 'orders/paid' })).status).toBe(200)
    expect(purchasesOf(again.recorded, ORDER_ID)[0].user).toMatchObject({ uid: purchase.user.uid, sid: purchase.user.sid })
  })
})

const shared = redisForTestFile()

describe("an order both the shopper's page and Shopify's webhook report", () => {
  it('is stored once, page first then webhook: the page copy counts, and the fields the webhook differs in are counted', async () => {
    const shop = await startShop()
    // The page's copy leaves out the optional totals, and rounds the revenue its own way.
    const { total_tax: _tax, total_shipping: _shipping, total_discount: _discount, ...pageCopy } = { ...EXAMPLE_PURCHASE, revenue: 404.9 }
    expect((await postPage(shop.endpoint, pageCopy, SHOPPER)).body).toEqual({ accepted: 1, duplicates: 0, rejected: [] })
    expect(await postShopify(shop.shopifyUrl, withShopper())).toEqual({ status: 200, body: { delivered: true, order_id: ORDER_ID } })
    const [stored, ...more] = purchasesOf(shop.recorded, ORDER_ID)
    expect(more).toEqual([])
    expect(stored.properties).toEqual(pageCopy)
    expect(stored).not.toHaveProperty('from_server')
    const text = await shop.relay.metrics()
    for (const field of ['revenue', 'total_tax', 'total_shipping', 'total_discount'])
      expect(metric(text, `df_relay_order_differences_total{field="${field}"}`), field).toBe(1)
    for (const field of ['currency', 'line_items']) expect(metric(text, `df_relay_order_differences_total{field="${field}"}`), field).toBe(0)
  })

  it('is stored once on Redis too, page first then webhook, with the difference counted', async () => {
    const shop = await startShop({ relay: { store: redisStore(shared.client(), { prefix: 'webhooks:' }) } })
    expect((await postPage(shop.endpoint, { ...EXAMPLE_PURCHASE, total_discount: 19.99 }, SHOPPER)).body).toMatchObject({ accepted: 1 })
    expect((await postShopify(shop.shopifyUrl, withShopper())).status).toBe(200)
    expect(purchasesOf(shop.recorded, ORDER_ID)).toEqual([expect.objectContaining({ properties: { ...EXAMPLE_PURCHASE, total_discount: 19.99 } })])
    const text = await shop.relay.metrics()
    expect(metric(text, 'df_relay_order_differences_total{field="total_discount"}')).toBe(1)
    expect(metric(text, 'df_relay_order_reports_total{reporter="server",order="second"}')).toBe(1)
  })

  it('is stored once, webhook first then page: the page is told it is a duplicate', async () => {
    const shop = await startShop()
    expect((await postShopify(shop.shopifyUrl, withShopper())).status).toBe(200)
    expect((await postPage(shop.endpoint, EXAMPLE_PURCHASE, SHOPPER)).body).toEqual({ accepted: 0, duplicates: 1, rejected: [] })
    // A reload of the thank-you page: still once.
    expect((await postPage(shop.endpoint, EXAMPLE_PURCHASE, SHOPPER)).body).toEqual({ accepted: 0, duplicates: 1, rejected: [] })
    expect(purchasesOf(shop.recorded, ORDER_ID)).toEqual([expect.objectContaining({ from_server: true, properties: EXAMPLE_PURCHASE })])
  })

  it('is stored once however often Shopify delivers the webhook again', async () => {
    const shop = await startShop()
    for (let delivery = 0; delivery < 3; delivery++) expect((await postShopify(shop.shopifyUrl, withShopper())).status).toBe(200)
    expect(await postShopify(shop.shopifyUrl, withShopper(), { topic: 'orders/paid' })).toMatchObject({ status: 200 })
    expect(purchasesOf(shop.recorded, ORDER_ID)).toHaveLength(1)
  })

  it("still lets the webhook's copy through after a forger's page copy of the order", async () => {
    const shop = await startShop()
    await postPage(shop.endpoint, { ...EXAMPLE_PURCHASE, revenue: 0.01 }, { uid: 'forger', sid: 'forger-session' })
    expect((await postShopify(shop.shopifyUrl, withShopper())).status).toBe(200)
    expect(purchasesOf(shop.recorded, ORDER_ID).map((event) => [event.user.uid, !!event.from_server, !!event.order_conflict])).toEqual([
      ['forger', false, false],
      [SHOPPER.uid, true, true]
    ])
  })
})

describe('when the relay cannot take the purchase', () => {
  it('answers 503, so that Shopify sends the order again; the retry is delivered, and the order stored once', async () => {
    const shop = await startShop({ timeout: 1500 })
    shop.recorded.failWith(() => new Error('the service is down'))
    const refused = await postShopify(shop.shopifyUrl, withShopper())
    expect(refused.status).toBe(503)
    expect(refused.body.error.message).toContain('the collector did not take the purchase within 1500 ms')
    expect(shop.recorded.events()).toEqual([])
    // The service is back; Shopify's retry comes (its first some seconds later).
    shop.recorded.failWith(undefined)
    await new Promise((resolve) => setTimeout(resolve, 2500))
    const retried = await postShopify(shop.shopifyUrl, withShopper())
    expect(retried).toEqual({ status: 200, body: { delivered: true, order_id: ORDER_ID } })
    await shop.tracker.flush()
    expect(purchasesOf(shop.recorded, ORDER_ID)).toHaveLength(1)
  }, 20000)

  it('answers 503 when the relay is not there at all, and counts nothing as sent', async () => {
    const shop = await startShop({ timeout: 1000, tracker: { endpoint: 'http://127.0.0.1:9/df/events' } })
    expect((await postShopify(shop.shopifyUrl, withShopper())).status).toBe(503)
    expect(shop.tracker.stats().sent).toBe(0)
  })
})

describe("the relay's coverage of orders", () => {
  it('counts orders by who reported them: the page alone, the webhook alone, both', async () => {
    const shop = await startShop()
    const order = (id: string) => edited(withShopper(), ['"id": 820982911946154508', '"id": ' + id])
    const pagePurchase = (id: string) => ({ ...EXAMPLE_PURCHASE, order_id: id })
    // 1001: the page only (no webhook configured yet). 1002: the webhook only (the tab was closed). 1003: both, page first. 1004: both, webhook first.
    await postPage(shop.endpoint, pagePurchase('1001'), SHOPPER)
    await postShopify(shop.shopifyUrl, order('1002'))
    await postPage(shop.endpoint, pagePurchase('1003'), SHOPPER)
    await postShopify(shop.shopifyUrl, order('1003'))
    await postShopify(shop.shopifyUrl, order('1004'))
    await postPage(shop.endpoint, pagePurchase('1004'), SHOPPER)
    // Reloads and retries count nothing more.
    await postPage(shop.endpoint, pagePurchase('1004'), SHOPPER)
    await postShopify(shop.shopifyUrl, order('1003'))
    const text = await shop.relay.metrics()
    const reports = (reporter: string, order: string) => metric(text, `df_relay_order_reports_total{reporter="${reporter}",order="${order}"}`)
    expect([reports('browser', 'first'), reports('server', 'first'), reports('browser', 'second'), reports('server', 'second')]).toEqual([2, 2, 1, 1])
    // Reported by both: 2. By the browser alone: 2 - 1. By the server alone (what the browser lost): 2 - 1.
    expect(['1001', '1002', '1003', '1004'].map((id) => purchasesOf(shop.recorded, id).length)).toEqual([1, 1, 1, 1])
  })
})
