import { utf8 } from './utf8'

/*
 * One event id per order, wherever the order is tracked: the thank-you page's purchase(), the
 * Shopify pixel and the shop's server all derive the same id from the key and the order id, so
 * a collector that stores each event id once (docs/reference/delivery.md) keeps one purchase
 * however many of them send it, and however often a confirmation page is reloaded.
 */

// FNV-1a, 64 bits (IETF draft-eastlake-fnv): simple, fast and stable everywhere. It is not a
// secret: its only job is to turn any order id into a short id that two orders do not share.
const OFFSET_BASIS = 0xcbf29ce484222325n
const PRIME = 0x100000001b3n

export const fnv1a64 = (text: string): bigint => {
  let hash = OFFSET_BASIS
  for (const byte of utf8.encode(text)) {
    hash = BigInt.asUintN(64, (hash ^ BigInt(byte)) * PRIME)
  }
  return hash
}

/**
 * The event id of the purchase of `orderId` for the merchant `key`. The key's length goes first
 * so that no key and order id run together into another pair's text. Page-made ids start with
 * 16 random characters and a dot, so no such id starts with "order.".
 */
export const orderEventId = (key: string, orderId: string) => 'order.' + fnv1a64(key.length + ':' + key + orderId).toString(36)
