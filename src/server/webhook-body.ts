/*
 * A webhook's raw body, read whole within bounds (shared/read-body.ts): the signature is over its
 * bytes, and every request to a server of the shop's may be malicious, so an endless body is cut
 * off, not read, and one that trickles is given up. Shopify's largest orders (hundreds of lines)
 * are some hundreds of KiB, and the platforms send them at once.
 */

/** The largest webhook body taken: 5 MiB. */
export const MAX_WEBHOOK_BYTES = 5 * 1024 * 1024

/** Milliseconds a webhook's body may take to arrive, as the relay gives a batch's. */
export const WEBHOOK_BODY_MS = 10000
