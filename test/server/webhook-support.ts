// What the order webhooks' tests share: the platforms' documented examples as they are stored
// (fixtures/README.md), signed as each platform signs, and a shop as it runs them: a relay with a
// recording sink, the shop's server tracker with the relay's secret, and the webhook handlers,
// each behind node:http on a loopback port.
import { createHmac } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { afterEach } from 'vitest'
import { createRelay, toNodeHandler, type RelayOptions } from '../../src/relay'
import { createServerTracker, shopifyOrderWebhook, wooCommerceOrderWebhook, type ServerTrackerOptions } from '../../src/server'
import { recordingSink, serve } from '../relay/support'

export const KEY = 'SHOP_KEY'
export const RELAY_SECRET = 'the-shops-server-secret-0123456789'
export const SHOPIFY_SECRET = 'shopify-webhook-signing-secret'
export const WOO_SECRET = 'woocommerce-webhook-secret'
export const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36'

/** A documented example, as the file holds it, byte for byte. */
export const fixture = (name: string) => readFileSync(new URL('fixtures/' + name, import.meta.url), 'utf8')
/** Shopify's documented orders/create example as it is: a test order, cancelled and voided. */
export const SHOPIFY_EXAMPLE = fixture('shopify-orders-create.json')
/**
 * The same order as a live shop sends it: not a test, not cancelled, paid. Changed as text, so
 * that every other byte, its 18-digit ids among them, stays the documented example's.
 */
export const SHOPIFY_ORDER = SHOPIFY_EXAMPLE.replace('"test": true', '"test": false')
  .replace('"cancelled_at": "2021-12-31T19:00:00-05:00"', '"cancelled_at": null')
  .replace('"cancel_reason": "customer"', '"cancel_reason": null')
  .replace('"financial_status": "voided"', '"financial_status": "paid"')
export const WOO_ORDER = fixture('woocommerce-order.json')

/** base64(HMAC-SHA256(secret, body)), as Shopify and WooCommerce sign a webhook. */
export const sign = (secret: string, body: string) => createHmac('sha256', secret).update(body, 'utf8').digest('base64')

/**
 * The documented example with `changes` written into its text (the body stays Shopify's
 * otherwise, ids and all): each [from, to] replaces the first `from`.
 */
export function edited(body: string, ...changes: [string, string][]): string {
  let text = body
  for (const [from, to] of changes) {
    if (!text.includes(from)) throw new Error('not in the example: ' + from)
    text = text.replace(from, to)
  }
  return text
}

const stops: (() => Promise<unknown>)[] = []
afterEach(async () => {
  await Promise.all(stops.splice(0).map((stop) => stop()))
})

/** A shop: the relay (memoryStore) with a recording sink, the server tracker, and both webhook handlers, over real HTTP. */
export async function startShop(options: { relay?: Partial<RelayOptions>; tracker?: Partial<ServerTrackerOptions>; timeout?: number } = {}) {
  const recorded = recordingSink()
  const relay = createRelay({ keys: [KEY], sink: recorded.sink, serverSecrets: [RELAY_SECRET], ...options.relay })
  const relayServer = await serve(toNodeHandler(relay))
  const endpoint = relayServer.origin + '/df/events'
  const errors: string[] = []
  const tracker = createServerTracker({
    key: KEY,
    endpoint,
    secret: RELAY_SECRET,
    flushInterval: 0,
    onError: (error) => errors.push(error.message),
    ...options.tracker
  })
  const timeout = options.timeout
  const shopify = await serve(toNodeHandler({ fetch: shopifyOrderWebhook({ secret: SHOPIFY_SECRET, tracker, timeout }) }))
  const woo = await serve(toNodeHandler({ fetch: wooCommerceOrderWebhook({ secret: WOO_SECRET, tracker, timeout }) }))
  stops.push(
    () => tracker.close({ timeout: 1000 }),
    () => relayServer.close(),
    () => shopify.close(),
    () => woo.close()
  )
  return { recorded, relay, endpoint, tracker, errors, shopifyUrl: shopify.origin + '/webhooks/shopify', wooUrl: woo.origin + '/webhooks/woocommerce' }
}

/** An answer's status and JSON body. */
async function answerOf(response: Response) {
  return { status: response.status, body: await response.json() }
}

/** POSTs a body to Shopify's webhook as Shopify does: JSON, its topic, its signature (or the headers given). */
export const postShopify = (url: string, body: string, { topic = 'orders/create', signature = sign(SHOPIFY_SECRET, body) as string | null } = {}) =>
  fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-shopify-topic': topic,
      'x-shopify-shop-domain': 'example.myshopify.com',
      ...(signature == null ? {} : { 'x-shopify-hmac-sha256': signature })
    },
    body
  }).then(answerOf)

/** POSTs a body to WooCommerce's webhook as WooCommerce does (WC_Webhook::deliver()). */
export const postWoo = (url: string, body: string, { topic = 'order.created', signature = sign(WOO_SECRET, body) as string | null } = {}) =>
  fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'user-agent': 'WooCommerce/9.4.0 Hookshot (WordPress/6.7)',
      'x-wc-webhook-source': 'https://shop.example/',
      'x-wc-webhook-topic': topic,
      'x-wc-webhook-resource': topic.split('.')[0],
      'x-wc-webhook-event': topic.split('.')[1] || '',
      'x-wc-webhook-id': '12',
      'x-wc-webhook-delivery-id': 'b3c5e0f1',
      ...(signature == null ? {} : { 'x-wc-webhook-signature': signature })
    },
    body
  }).then(answerOf)

/** A purchase as a shopper's thank-you page posts it to the relay (the tracker's JSON batch). */
export async function postPage(endpoint: string, purchase: Record<string, unknown>, user: { uid: string; sid: string }) {
  const envelope = { event: 'purchase', properties: purchase, key: KEY, t_client: Date.now(), user, event_id: 'page-made-id' }
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'text/plain;charset=UTF-8', 'user-agent': CHROME },
    body: JSON.stringify([envelope])
  })
  return { status: response.status, body: await response.json() }
}

/** The purchases of one order the sink holds. */
export const purchasesOf = (recorded: ReturnType<typeof recordingSink>, orderId: string) =>
  recorded.events().filter((event) => event.event == 'purchase' && (event.properties as { order_id: string }).order_id == orderId)

/** A metric's value in the relay's text, by its name and labels as they print. */
export function metric(text: string, series: string): number {
  const line = text.split('\n').find((row) => row.startsWith(series + ' '))
  if (!line) throw new Error('no series ' + series)
  return Number(line.slice(series.length + 1))
}
