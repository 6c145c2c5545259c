/*
 * Under which ids the store remembers an event as delivered. An event id is the sender's word,
 * and anyone can send any word, so the relay never lets one sender's id shut out another's:
 *
 * - Ids are scoped by the API key: shop A's events can never make shop B's duplicates.
 * - A purchase's id comes from its order (shared/order-event-id.ts), which a page can compute
 *   for an order not yet placed. So a purchase is remembered by its order AND by what it says
 *   (a digest of its properties): the same purchase sent again (a reloaded confirmation page,
 *   the pixel and the page saying the same) is one, while a purchase that says something else
 *   for the same order is stored too, marked as a conflict, and never shut out by the first.
 * - The shop's own server sender (serverSecrets) has the last word on an order: once its
 *   purchase is stored, a page's purchase for that order is a duplicate.
 */
import { fnv1a64 } from '../shared/order-event-id'
import type { Envelope } from '../shared/types'
import type { RelayEvent } from './types'

const short = (text: string) => fnv1a64(text).toString(36)

/** An event id in its key's scope: a short digest of the key, so that the store's keys stay short whatever the key. */
export const scopedId = (key: string, id: string) => short(key) + '.' + id

/** The ids under which an accepted event is claimed and remembered. */
export interface DeliveryIds {
  /** What the event is claimed under: its id, scoped; for a purchase, also what it says. */
  claim: string
  /** A purchase's order, scoped: remembered once any purchase of the order is stored. */
  order?: string
  /** A purchase's order as the shop's server sender stored it. */
  verified?: string
}

/** The ids of an event that has an event id (events without one are never deduplicated). */
export function deliveryIds(event: Envelope): DeliveryIds {
  const id = scopedId(event.key, event.event_id)
  if (event.event != 'purchase') return { claim: id }
  // The rules return properties in their schema's order, so equal purchases give equal text.
  return { claim: id + '#' + short(JSON.stringify(event.properties)), order: id, verified: id + '#server' }
}

/**
 * Who an event belongs to, as the store keeps it for the `?unconfirmed=` question: a digest of
 * the shopper's uid, so that the store holds no uid, and only a request of that shopper's is told
 * whether its events arrived.
 */
export const ownerOf = (uid: string) => short(uid)

/** The ids an event that reached the sink is remembered under: its claim, a purchase's order, and the order as the server sender's. */
export function rememberedIds(event: RelayEvent): string[] {
  const { claim, order, verified } = deliveryIds(event)
  return [claim, ...(order ? [order] : []), ...(event.from_server && verified ? [verified] : [])]
}
