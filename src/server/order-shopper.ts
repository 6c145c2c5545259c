import { fnv1a64 } from '../shared/order-event-id'
import type { EventProperties, User } from '../shared/types'

/*
 * The shopper of an order that reaches the shop's server. The storefront writes the ids its
 * tracker has into the order (on Shopify as cart attributes, which Shopify copies into the order's
 * note_attributes; on WooCommerce through the documented PHP snippet, into the order's meta data),
 * so the webhook's purchase names the shopper whose page reported it, and the relay takes it for
 * that purchase again (docs/guide/order-webhooks.md). Without them the ids are derived from the
 * order, the same for every delivery of it.
 */

/** The names of the order attributes (Shopify) or meta keys (WooCommerce) the storefront writes. */
export const UID_ATTRIBUTE = '_df_uid'
export const SID_ATTRIBUTE = '_df_sid'

/** The shopper of an order: uid and sid always, ip and ua where the order has them. */
export type OrderUser = Partial<User> & { uid: string; sid: string }

/** An order as its purchase is sent: SPEC's properties and the shopper. */
export interface OrderPurchase {
  properties: EventProperties['purchase']
  shopper: OrderUser
}

/** What an order says of who placed it. */
export interface OrderParty {
  /** The order's attributes or meta data, by name: where the storefront put the shopper's ids. */
  attributes: Map<string, unknown>
  /** 'shopify' or 'woo': the start of derived ids, so no two platforms' orders share one. */
  platform: string
  orderId: string
  /** The platform's customer id, for a customer with an account; undefined for a guest. */
  customerId?: string
  /** The address and the user agent of the browser the order was placed in, where the order has them. */
  ip?: string
  ua?: string
}

// SPEC "User object": uid and sid are at most 32 characters. A storefront id is one the tracker
// made (shared/ids.ts: nanoid's alphabet); anything else in the attribute is not ours.
const STOREFRONT_ID = /^[\w-]{1,32}$/

/**
 * An id made of the order's own ids, keyed with the webhook's secret: the same for every
 * delivery of the order, and one no page can know. An id read off the order (its number, the
 * customer's, both counting up) could be guessed, and a page that reported a purchase under it
 * before the webhook came would pass for the order's shopper.
 */
function derivedId(secret: string, platform: string, kind: string, id: string): string {
  return platform + '-' + kind + '-' + fnv1a64(secret + ' ' + kind + ' ' + id).toString(36)
}

/**
 * The shopper's ids: those the storefront wrote into the order where they are ids of ours;
 * otherwise a uid derived from the customer (the same for all their orders) or, for a guest,
 * from the order, and a sid derived from the order.
 */
export function orderShopper({ attributes, platform, orderId, customerId, ip, ua }: OrderParty, secret: string): OrderUser {
  const written = (name: string) => {
    const value = attributes.get(name)
    return typeof value == 'string' && STOREFRONT_ID.test(value) ? value : undefined
  }
  const uid = written(UID_ATTRIBUTE) || (customerId ? derivedId(secret, platform, 'c', customerId) : derivedId(secret, platform, 'o', orderId))
  const sid = written(SID_ATTRIBUTE) || derivedId(secret, platform, 's', orderId)
  const shopper: OrderUser = { uid, sid }
  if (ip) shopper.ip = ip
  if (ua) shopper.ua = ua
  return shopper
}
