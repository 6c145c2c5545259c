import { isFeedbackError, thrownText } from '../shared/error'
import { readBodyWithin } from '../shared/read-body'
import { orderDeliveryOf, type OrderFate } from './order-delivery'
import { isFields, parseOrderJson, type Fields } from './order-json'
import type { OrderPurchase } from './order-shopper'
import type { ServerTracker } from './types'
import { delivered, failure, nothingToSend } from './webhook-answers'
import { MAX_WEBHOOK_BYTES, WEBHOOK_BODY_MS } from './webhook-body'
import { signatureCheck } from './webhook-signature'

/*
 * An order webhook's way, whichever platform sends it: the raw body read and its signature
 * checked before anything else (401, nothing sent, when it fails), the platform's topic, the
 * order parsed with every id exact and mapped to SPEC's purchase (400 naming the field when the
 * body is no order), the purchase handed to the shop's server tracker, and 2xx only once the
 * collector took it: when the relay or the service is down the platform is answered 503, and
 * its retry is the same order, which the relay keeps once (docs/guide/order-webhooks.md).
 */

/** What differs between platforms: their header, their topics, their order. */
export interface OrderPlatform {
  /** The handler's name in messages: 'shopifyOrderWebhook'. */
  name: string
  /** The header that carries base64(HMAC-SHA256(secret, body)). */
  signatureHeader: string
  /** The answer to a request the platform sends unsigned and that sends nothing (WooCommerce's ping), else undefined. */
  unsigned?(request: Request, body: Uint8Array): Response | undefined
  /** The topic of a signed request, or why it makes no purchase. */
  topicOf(request: Request): { topic: string } | { ignore: string }
  /** The order's purchase, or why it makes none; throws a FeedbackError naming the field of a body that is no order. */
  purchaseOf(topic: string, order: Fields, secret: string): OrderPurchase | { ignore: string }
}

/** What every order webhook is given. */
export interface OrderWebhookSettings {
  secret: string
  tracker: ServerTracker
  /** Milliseconds to wait for the collector before answering 503. */
  timeout: number
}

/** Why a purchase that did not reach the collector is answered 503: the platform will send the order again. */
function notDelivered(fate: Exclude<OrderFate, 'delivered'>, timeout: number): string {
  if (fate == 'queued')
    return 'the collector did not take the purchase within ' + timeout + ' ms; the tracker keeps trying, and a retry of this order is kept once'
  return 'the purchase was not delivered (' + fate + "): the tracker's onError says why"
}

/** The body as an order: JSON (ids kept to the digit) of an object, or the 400 that says what it is instead. */
function orderOf(topic: string, body: Uint8Array): Fields | Response {
  let parsed: unknown
  try {
    parsed = parseOrderJson(new TextDecoder('utf-8', { fatal: true }).decode(body))
  } catch (error) {
    return failure(400, 'discovery-feedback: ' + topic + ': the body is not an order in JSON: ' + thrownText(error))
  }
  return isFields(parsed) ? parsed : failure(400, 'discovery-feedback: ' + topic + ': the body must be an order (a JSON object)')
}

/** Makes a platform's handler: `(request) => Promise<Response>`, on Web standards. */
export function orderWebhook(platform: OrderPlatform, { secret, tracker, timeout }: OrderWebhookSettings) {
  if (typeof secret != 'string' || !secret)
    throw new TypeError('discovery-feedback: ' + platform.name + ": options.secret is required: the webhook's signing secret")
  const deliver = orderDeliveryOf(tracker)
  const signed = signatureCheck(secret)

  async function answer(request: Request): Promise<Response> {
    if (request.method != 'POST') return failure(405, 'an order webhook is a POST', { allow: 'POST' })
    const body = await readBodyWithin(request, MAX_WEBHOOK_BYTES, WEBHOOK_BODY_MS)
    // Told apart by type: `==` would turn the bytes into text to compare them.
    if (typeof body == 'string')
      return body == 'too large'
        ? failure(413, 'the body is larger than an order webhook may be (' + MAX_WEBHOOK_BYTES + ' bytes)')
        : failure(408, 'the body did not arrive within ' + WEBHOOK_BODY_MS / 1000 + ' s')
    const unsigned = platform.unsigned?.(request, body)
    if (unsigned) return unsigned
    if (!(await signed(body, request.headers.get(platform.signatureHeader))))
      return failure(401, platform.signatureHeader + " is missing, or is not the body's signature with this secret: nothing was sent")
    const topic = platform.topicOf(request)
    if ('ignore' in topic) return nothingToSend(topic.ignore)
    const order = orderOf(topic.topic, body)
    if (order instanceof Response) return order
    const purchase = platform.purchaseOf(topic.topic, order, secret)
    if ('ignore' in purchase) return nothingToSend(purchase.ignore)
    const fate = await deliver(purchase.properties, purchase.shopper, timeout)
    if (fate == 'delivered') return delivered(purchase.properties.order_id)
    // Too large for any request it stays, however often the platform sends it again: answered
    // as taken, so that its retries cannot get the webhook switched off (WooCommerce disables one
    // after five failures in a row); the tracker's onError has reported it.
    if (fate == 'too_large') return nothingToSend(notDelivered(fate, timeout))
    return failure(503, notDelivered(fate, timeout), { 'retry-after': '60' })
  }

  return async (request: Request): Promise<Response> => {
    try {
      return await answer(request)
    } catch (error) {
      // The order's fields and SPEC's rules throw FeedbackErrors that name the field: the body is at fault.
      if (isFeedbackError(error)) return failure(400, error.message)
      return failure(500, 'discovery-feedback: ' + platform.name + ' failed: ' + thrownText(error))
    }
  }
}
