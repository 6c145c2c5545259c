import { orderWebhook } from './order-webhook'
import { nothingToSend } from './webhook-answers'
import { wooCommercePurchase } from './woocommerce-order'
import type { OrderWebhook, WooCommerceOrderWebhookOptions } from './types'

// An order is a purchase once it is paid for: 'processing' (paid, to be shipped) or
// 'completed'. 'pending' and 'on-hold' wait for a payment; a later order.updated brings it.
const PAID_STATUSES = ['processing', 'completed']
const ORDER_TOPICS = ['order.created', 'order.updated']

// WooCommerce pings the delivery URL when a webhook is saved active: a form body
// `webhook_id=<id>`, unsigned (WC_Webhook::deliver_ping()), and the webhook is saved only if the
// answer is 200.
const PING = /^webhook_id=\d+$/

/**
 * A handler of WooCommerce's order webhooks (`(request) => Promise<Response>`, on Web standards):
 * order.created and order.updated of a paid order (processing or completed) become one purchase,
 * sent through the shop's server tracker and answered 200 once the collector took it. The request
 * must carry `X-WC-Webhook-Signature`, base64(HMAC-SHA256(secret, raw body)), or it is answered
 * 401 and nothing is sent; WooCommerce's ping is answered 200; another topic or an unpaid order
 * 200 with nothing sent; a body that is no order 400, naming the field; a purchase the collector
 * did not take in time 503 (docs/guide/order-webhooks.md: WooCommerce does not send a failed
 * delivery again, but each later change of the order brings it).
 * @param options - The webhook's secret, the server tracker that sends the purchase, and which order id the shop's pages report.
 */
export function wooCommerceOrderWebhook(options: WooCommerceOrderWebhookOptions): OrderWebhook {
  const { secret, tracker, orderId = 'number', timeout = 30000 } = options
  if (orderId != 'number' && orderId != 'id') throw new TypeError("discovery-feedback: wooCommerceOrderWebhook: options.orderId must be 'number' or 'id'")
  return orderWebhook(
    {
      name: 'wooCommerceOrderWebhook',
      signatureHeader: 'x-wc-webhook-signature',
      unsigned(request, body) {
        if (request.headers.has('x-wc-webhook-topic') || body.byteLength > 64) return undefined
        return PING.test(new TextDecoder().decode(body).trim()) ? nothingToSend('the ping of a webhook being saved') : undefined
      },
      topicOf(request) {
        const topic = request.headers.get('x-wc-webhook-topic') || ''
        return ORDER_TOPICS.includes(topic)
          ? { topic }
          : { ignore: (topic || 'no X-WC-Webhook-Topic') + ' is not a topic that makes a purchase (' + ORDER_TOPICS.join(', ') + ')' }
      },
      purchaseOf(topic, order, secret) {
        if (!PAID_STATUSES.includes(order.status as string))
          return { ignore: 'the order is not paid for yet (status ' + (typeof order.status == 'string' ? order.status : typeof order.status) + ')' }
        return wooCommercePurchase(topic, order, orderId, secret)
      }
    },
    { secret, tracker, timeout }
  )
}
