import type { OrderUser } from './order-shopper'
import type { ServerFate } from './transport'
import type { ServerTracker } from './types'
import type { EventProperties } from '../shared/types'

/*
 * How an order webhook hands its purchase to the shop's server tracker and learns what became
 * of it: the platform is answered 2xx only once the collector took the purchase (docs/guide/
 * order-webhooks.md). The tracker's public face counts, it does not tell of one event; this is
 * the one way in that does, kept to the webhooks of this package.
 */

/** What became of an order's purchase: its fate, or `'queued'` when the time to wait ran out first (the tracker keeps trying). */
export type OrderFate = ServerFate | 'queued'

/**
 * Tracks a purchase and resolves its fate within `timeout` ms. The user needs uid and sid; ip
 * and ua are sent where the order has them: an order placed in the shop's admin, at a point of
 * sale or through an app was never in a browser, and so has none to give (SPEC "User object":
 * they then default to the request's).
 */
export type DeliverOrder = (properties: EventProperties['purchase'], user: OrderUser, timeout: number) => Promise<OrderFate>

const deliverers = new WeakMap<ServerTracker, DeliverOrder>()

/** Called by createServerTracker for each tracker it makes. */
export const registerOrderDelivery = (tracker: ServerTracker, deliver: DeliverOrder) => void deliverers.set(tracker, deliver)

/** The way in of a tracker that createServerTracker made; throws for anything else, when the webhook is set up. */
export function orderDeliveryOf(tracker: ServerTracker): DeliverOrder {
  const deliver = deliverers.get(tracker)
  if (!deliver) throw new TypeError('discovery-feedback: order webhook: options.tracker must be a tracker that createServerTracker made')
  return deliver
}
