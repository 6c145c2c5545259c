import { orderWebhook } from './order-webhook'
import { shopifyPurchase } from './shopify-order'
import type { OrderWebhook, ShopifyOrderWebhookOptions } from './types'

// The topics whose order is a purchase: placed, and paid (a payment that comes later, such as
// a bank transfer). Either makes one purchase: the relay keeps an order once, whichever comes.
const PURCHASE_TOPICS = ['orders/create', 'orders/paid']

/**
 * A handler of Shopify's order webhooks (`(request) => Promise<Response>`, on Web standards:
 * Node, Next.js, Hono, workers): each order of `topics` becomes one purchase, sent through the
 * shop's server tracker and answered 200 once the collector took it. The request must carry
 * `X-Shopify-Hmac-Sha256`, base64(HMAC-SHA256(secret, raw body)), or it is answered 401 and
 * nothing is sent; another topic, a test order and a cancelled or voided one are answered 200
 * with nothing sent; a body that is no order 400,
 * naming the field; a purchase the collector did not take in time 503, so that Shopify sends
 * the order again (docs/guide/order-webhooks.md).
 * @param options - The webhook's signing secret, the server tracker that sends the purchase, and the topics taken.
 */
export function shopifyOrderWebhook(options: ShopifyOrderWebhookOptions): OrderWebhook {
  const { secret, tracker, topics = PURCHASE_TOPICS, timeout = 4000 } = options
  if (!Array.isArray(topics) || !topics.every((topic) => typeof topic == 'string'))
    throw new TypeError('discovery-feedback: shopifyOrderWebhook: options.topics must list Shopify topics, such as orders/create')
  return orderWebhook(
    {
      name: 'shopifyOrderWebhook',
      signatureHeader: 'x-shopify-hmac-sha256',
      topicOf(request) {
        const topic = request.headers.get('x-shopify-topic') || ''
        return topics.includes(topic)
          ? { topic }
          : { ignore: (topic || 'no X-Shopify-Topic') + ' is not a topic that makes a purchase here (' + topics.join(', ') + ')' }
      },
      purchaseOf(topic, order, secret) {
        // Orders that are no sale: Shopify's test orders (a test gateway, Bogus), and orders
        // cancelled or voided before this copy of them was sent.
        if (order.test === true) return { ignore: 'a test order (test: true) makes no purchase' }
        if (order.cancelled_at != null || order.financial_status == 'voided') return { ignore: 'a cancelled or voided order makes no purchase' }
        return shopifyPurchase(topic, order, secret)
      }
    },
    { secret, tracker, timeout }
  )
}
