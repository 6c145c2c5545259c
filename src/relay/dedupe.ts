/*
 * Under which keys the store remembers events. An event id is the sender's word, and anyone can
 * send any word, so no id a sender gives may reach a key that means something else:
 *
 * - Every key starts with a digest of the API key: shop A's events never make shop B's duplicates.
 * - An event is claimed and remembered for its shopper, the owner a digest of its uid: a
 *   shopper's resend is a duplicate; the same id from another shopper is not, so no answer tells
 *   one shopper anything of another's events.
 * - Each kind of key has a namespace of its own, and an event id only ever follows the owner in
 *   the first two, by the event's kind, never by its id:
 *     <scope>.e.<owner>.<id>   an event, not a purchase, of one shopper
 *     <scope>.p.<owner>.<id>   a purchase of one shopper's (page, pixel, GA4 bridge, and the server sender naming that shopper)
 *     <scope>.o.<id>           the shopper whose browser reported the order first
 *     <scope>.s.<id>           the shopper the shop's server sender named for the order
 *     <scope>.f.<id>           the figures of the order's first copy (order-figures.ts), kept
 *                              where the others keep an owner, for the other reporter's copy
 *                              to be compared with
 *     <scope>.l.<id>           the order's purchase being stored now: claimed by each request
 *                              with a purchase of the order while its sink runs, never remembered
 *   A purchase's id is its order's (envelopes.ts gives it, whatever it came with), and no other
 *   event may carry an order's id, so a click-item can never touch a purchase, nor one order's
 *   purchase another's.
 *
 * The scope is one base-36 number and the owner two joined by a dot, so the parts of a key never
 * run together into another key.
 */
import type { Envelope } from '../shared/types'

/** FNV-1a over the text's UTF-16 code units in 32 bits, in plain numbers: fast enough for every event. */
export function fnv1a32(text: string, from = 0, step = 1): number {
  let hash = 0x811c9dc5
  for (let index = from; index >= 0 && index < text.length; index += step) hash = Math.imul(hash ^ text.charCodeAt(index), 0x01000193)
  return hash >>> 0
}

// The key's digest, made once per key: the relay takes a few keys, and this runs for every event.
const scopes = new Map<string, string>()

/** The digest an API key's store keys start with: 32 bits tell a shop's few keys apart, and keep every store key short. */
function scopeOf(key: string): string {
  let scope = scopes.get(key)
  if (scope === undefined) {
    scope = fnv1a32(key).toString(36)
    if (scopes.size < 1000) scopes.set(key, scope)
  }
  return scope
}

/**
 * Who an event belongs to, as the store keeps it: a digest of the shopper's uid, so that the store
 * holds no uid. 64 bits, as two 32-bit digests read forwards and backwards.
 */
export const ownerOf = (uid: string) => fnv1a32(uid).toString(36) + '.' + fnv1a32(uid, uid.length - 1, -1).toString(36)

/**
 * Whether a store's lookup says a key was delivered: with its owner, '' included, or `true` from
 * a store written before owners were kept (delivered, by a shopper it cannot name).
 */
export const isDelivered = (owner: unknown): owner is string | true => typeof owner == 'string' || owner === true

/** The key an event, not a purchase, of `owner` with this id is claimed and remembered under. */
export const eventKey = (apiKey: string, owner: string, eventId: string) => scopeOf(apiKey) + '.e.' + owner + '.' + eventId

/** The key of `owner`'s purchase of the order with this id (a purchase's id is its order's, shared/order-event-id.ts). */
export const purchaseKey = (apiKey: string, owner: string, eventId: string) => scopeOf(apiKey) + '.p.' + owner + '.' + eventId

/** The key under which the relay keeps whatever it knows of an event's delivery: a purchase by its order id, anything else by its id. */
export const shopperKey = (apiKey: string, owner: string, eventId: string) => (isOrderId(eventId) ? purchaseKey : eventKey)(apiKey, owner, eventId)

/** Whether an event id is an order's (shared/order-event-id.ts): no id a page makes starts so. */
export const isOrderId = (eventId: string) => eventId.startsWith('order.')

/** The keys the relay derives for a purchase's order. */
export interface OrderKeys {
  /** The shopper's own purchase of the order: claimed by a page's copy, marked by the server's. */
  shopper: string
  /** The shopper whose browser (page, pixel, GA4 bridge) reported the order first. */
  reported: string
  /** The shopper the shop's server sender named for the order; its copy is claimed here, once per order. */
  server: string
  /** The figures of the order's first copy to reach the sink. */
  figures: string
  /**
   * The order's purchase being stored now: claimed beside the purchase by a request that carries
   * one, and let go once its sink answered, so that a request with another purchase of the order
   * waits for what that one leaves in `reported`, `server` and `figures` (order-claims.ts).
   */
  pending: string
}

/** The keys an event that has an id is claimed and remembered under (events without one are never deduplicated). */
export interface DeliveryIds {
  /** What the event is claimed under before the sink runs. */
  claim: string
  /** A purchase's order. */
  order?: OrderKeys
}

/**
 * The keys of an event with an event id, sent by the shopper `owner`; `server`: by the shop's
 * server sender, whose purchase is claimed by its order, since it speaks once per order.
 */
export function deliveryIds(event: Envelope, owner: string, server: boolean): DeliveryIds {
  if (event.event != 'purchase') return { claim: eventKey(event.key, owner, event.event_id) }
  const scope = scopeOf(event.key)
  const order = {
    shopper: purchaseKey(event.key, owner, event.event_id),
    reported: scope + '.o.' + event.event_id,
    server: scope + '.s.' + event.event_id,
    figures: scope + '.f.' + event.event_id,
    pending: scope + '.l.' + event.event_id
  }
  return { claim: server ? order.server : order.shopper, order }
}

/**
 * The keys an event that reached the sink is remembered under: its claim; for a page's purchase
 * that reported its order first, the order as reported; for the server sender's, the shopper's
 * own purchase, so that their browser's copy after it is a duplicate.
 */
export function rememberedIds({ claim, order }: DeliveryIds, firstReport: boolean): string[] {
  if (!order) return [claim]
  if (claim == order.server) return [claim, order.shopper]
  return firstReport ? [claim, order.reported] : [claim]
}
