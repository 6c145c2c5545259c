// @vitest-environment node
// WooCommerce's order webhooks through a relay, over real HTTP, with the order JSON of
// WooCommerce's REST API documentation (which an order webhook delivers as it is; fixtures/README.md),
// signed as WC_Webhook::generate_signature() signs it: the ping, what is refused and what is
// answered without sending, each paid order one purchase at the sink with every field, its event
// id the GA4 bridge's for GTM4WP's purchase of the same order, and the shopper's ids.
import { describe, expect, it } from 'vitest'
import { createGa4Mapping } from '../../src/integrations/data-layer/mapping'
import { orderEventId } from '../../src/shared/order-event-id'
import { edited, KEY, postPage, postWoo, purchasesOf, sign, startShop, WOO_ORDER, WOO_SECRET } from './webhook-support'

const SHOPPER = { uid: 'Uakgb_J5m9g-0JDMbcJqL', sid: 'S3s510n-1d_0f-th3-tab' }
const withShopper = (body = WOO_ORDER) =>
  edited(body, [
    '"meta_data": [\n    {\n      "id": 13106,',
    `"meta_data": [\n    {"id": 13107, "key": "_df_uid", "value": "${SHOPPER.uid}"},\n    {"id": 13108, "key": "_df_sid", "value": "${SHOPPER.sid}"},\n    {\n      "id": 13106,`
  ])
// The purchase the documented order is: its number, its total, the lines' prices after coupons (`price`), a simple product's variant its product.
const EXAMPLE_PURCHASE = {
  order_id: '727',
  currency: 'USD',
  revenue: 29.35,
  total_tax: 1.35,
  total_shipping: 10,
  total_discount: 0,
  line_items: [
    { item_id: '93', variant_item_id: '93', unit_price: 3, quantity: 2 },
    { item_id: '22', variant_item_id: '23', unit_price: 12, quantity: 1 }
  ]
}

describe('wooCommerceOrderWebhook', () => {
  it('answers the ping of a webhook being saved 200, unsigned as WooCommerce sends it, and sends nothing', async () => {
    const shop = await startShop()
    const ping = await fetch(shop.wooUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'WooCommerce/9.4.0 Hookshot (WordPress/6.7)' },
      body: 'webhook_id=12'
    })
    expect(ping.status).toBe(200)
    await shop.tracker.flush()
    expect(shop.recorded.events()).toEqual([])
  })

  it('answers a missing or a wrong signature 401 and sends nothing; an order body dressed as a ping is no ping', async () => {
    const shop = await startShop()
    for (const signature of [null, sign('not-the-secret', WOO_ORDER), sign(WOO_SECRET, WOO_ORDER + ' ')]) {
      const answer = await postWoo(shop.wooUrl, WOO_ORDER, { signature })
      expect(answer.status).toBe(401)
      expect(answer.body.error.message).toContain("x-wc-webhook-signature is missing, or is not the body's signature")
    }
    expect((await postWoo(shop.wooUrl, 'webhook_id=12', { signature: null })).status).toBe(401)
    await shop.tracker.flush()
    expect(shop.recorded.events()).toEqual([])
  })

  it('answers another topic, and an order not paid for yet, 200 and sends nothing', async () => {
    const shop = await startShop()
    expect(await postWoo(shop.wooUrl, WOO_ORDER, { topic: 'product.created' })).toMatchObject({ status: 200, body: { delivered: false } })
    expect(await postWoo(shop.wooUrl, WOO_ORDER, { topic: 'order.deleted' })).toMatchObject({ status: 200, body: { delivered: false } })
    for (const status of ['pending', 'on-hold', 'cancelled', 'failed']) {
      expect(await postWoo(shop.wooUrl, edited(WOO_ORDER, ['"status": "processing"', `"status": "${status}"`]))).toEqual({
        status: 200,
        body: { delivered: false, reason: `the order is not paid for yet (status ${status})` }
      })
    }
    await shop.tracker.flush()
    expect(shop.recorded.events()).toEqual([])
  })

  it('answers a body that is no order 400, naming what is wrong', async () => {
    const shop = await startShop()
    const cases: [string, string][] = [
      ['{"status": "processing"', 'order.created: the body is not an order in JSON'],
      [edited(WOO_ORDER, ['"total": "29.35"', '"total": "29,35"']), 'order.created: total must be an amount'],
      [edited(WOO_ORDER, ['"number": "727"', '"number": ""']), 'order.created: number must be an id'],
      [edited(WOO_ORDER, ['"quantity": 2', '"quantity": 0']), 'order.created: line_items[0].quantity must be a whole number of 1 or more'],
      [edited(WOO_ORDER, ['"currency": "USD"', '"currency": 840']), 'order.created: currency must be a non-empty string, got 840']
    ]
    for (const [body, message] of cases) {
      const answer = await postWoo(shop.wooUrl, body)
      expect(answer.status, message).toBe(400)
      expect(answer.body.error.message).toContain('discovery-feedback: ' + message)
    }
    await shop.tracker.flush()
    expect(shop.recorded.events()).toEqual([])
  })

  it("makes WooCommerce's documented order one purchase at the sink, its event id that of GTM4WP's purchase of the same order", async () => {
    const shop = await startShop()
    expect(await postWoo(shop.wooUrl, WOO_ORDER)).toEqual({ status: 200, body: { delivered: true, order_id: '727' } })
    const [purchase, ...more] = purchasesOf(shop.recorded, '727')
    expect(more).toEqual([])
    expect(purchase.properties).toEqual(EXAMPLE_PURCHASE)
    // GTM4WP's push on the thank-you page: transaction_id is $order->get_order_number().
    const page = createGa4Mapping({}).purchaseOf(
      { transaction_id: '727', currency: 'USD', value: 29.35, tax: 1.35, shipping: 10, items: [{ item_id: 93, price: 3, quantity: 2 }] },
      () => {}
    )
    expect(purchase.event_id).toBe(orderEventId(KEY, page.order_id))
    // A guest's order without the storefront's ids: ids derived from the order, keyed with the
    // webhook's secret, so that no page can report the order under them first.
    expect(purchase.user.uid).toMatch(/^woo-o-[0-9a-z]+$/)
    expect(purchase.user.sid).toMatch(/^woo-s-[0-9a-z]+$/)
    expect(purchase.user.uid).not.toBe('woo-o-727')
  })

  it("takes the shopper's uid and sid from the order's meta data, and its ip and user agent", async () => {
    const shop = await startShop()
    const body = edited(
      withShopper(),
      ['"customer_ip_address": ""', '"customer_ip_address": "198.51.100.7"'],
      ['"customer_user_agent": ""', '"customer_user_agent": "Mozilla/5.0 (Macintosh)"']
    )
    expect((await postWoo(shop.wooUrl, body, { topic: 'order.updated' })).status).toBe(200)
    expect(purchasesOf(shop.recorded, '727')).toEqual([expect.objectContaining({ user: { ...SHOPPER, ip: '198.51.100.7', ua: 'Mozilla/5.0 (Macintosh)' } })])
  })

  it('stores the order once when the page and every later change of the order report it too', async () => {
    const shop = await startShop()
    expect((await postPage(shop.endpoint, EXAMPLE_PURCHASE, SHOPPER)).body).toMatchObject({ accepted: 1 })
    expect((await postWoo(shop.wooUrl, withShopper(), { topic: 'order.created' })).status).toBe(200)
    expect((await postWoo(shop.wooUrl, edited(withShopper(), ['"status": "processing"', '"status": "completed"']), { topic: 'order.updated' })).status).toBe(
      200
    )
    expect(purchasesOf(shop.recorded, '727')).toHaveLength(1)
  })
})
