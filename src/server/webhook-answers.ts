/*
 * What an order webhook answers the platform. Shopify and WooCommerce read the status alone: 2xx
 * is delivered, anything else a failure (Shopify retries it, WooCommerce counts it toward
 * disabling the webhook). The body, in SPEC's error shape (`{ error: { message } }`), is for the
 * person reading the platform's delivery log.
 */

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } })

/** 200: the purchase reached the collector (or the relay had it already). */
export const delivered = (orderId: string) => json(200, { delivered: true, order_id: orderId })

/** 200 with nothing sent: a request that is no order to report, which the platform must not send again (a ping, another topic, an unpaid order). */
export const nothingToSend = (why: string) => json(200, { delivered: false, reason: why })

/** An answer that is no success, with its message. */
export const failure = (status: number, message: string, headers?: Record<string, string>) => json(status, { error: { message } }, headers)
