/*
 * Under which ids the store remembers an event as delivered. An event id is the sender's word,
 * and anyone can send any word, so the relay never lets one sender's id shut out another's:
 *
 * - Ids are scoped by the API key: shop A's events can never make shop B's duplicates.
 * - A purchase's id comes from its order (shared/order-event-id.ts), which a page can compute
 *   for an order not yet placed. So a purchase is remembered by its order, with the shopper who
 *   sent it, AND by what it says (a digest of its properties): the same purchase sent again is
 *   one, and so is any purchase of the order from the same shopper's browser (the page and the
 *   pixel), while another shopper's that says something else is stored too, marked as a
 *   conflict: a forger's copy never shuts out the real one.
 * - The shop's own server sender (serverSecrets) has the last word on an order: once its
 *   purchase is stored, a page's purchase for that order is a duplicate.
 */
import { fnv1a64 } from '../shared/order-event-id'
import type { Envelope } from '../shared/types'
import type { RelayEvent } from './types'

const short = (text: string) => fnv1a64(text).toString(36)

/** FNV-1a over the text's UTF-16 code units in 32 bits, in plain numbers: fast enough for every event. */
export function fnv1a32(text: string, from = 0, step = 1): number {
  let hash = 0x811c9dc5
  for (let index = from; index >= 0 && index < text.length; index += step) hash = Math.imul(hash ^ text.charCodeAt(index), 0x01000193)
  return hash >>> 0
}

// The key's digest, made once per key: the relay takes a few keys, and this runs for every event.
const scopes = new Map<string, string>()

/** An event id in its key's scope: a digest of the key, so that the store's keys stay short whatever the key. */
export function scopedId(key: string, id: string): string {
  let scope = scopes.get(key)
  if (scope === undefined) {
    // 32 bits tell a shop's few keys apart, and keep every store key short.
    scope = fnv1a32(key).toString(36)
    if (scopes.size < 1000) scopes.set(key, scope)
  }
  return scope + '.' + id
}

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
  // The rules return properties in their schema's order, so equal purchases give equal text. A
  // 64-bit digest: a forger who knew the real purchase to the cent could in principle make
  // another that shares it, which is why the server sender's word is final (README).
  return { claim: id + '#' + short(JSON.stringify(event.properties)), order: id, verified: id + '#server' }
}

/**
 * Who an event belongs to, as the store keeps it for the `?unconfirmed=` question: a digest of
 * the shopper's uid, so that the store holds no uid, and only a request of that shopper's is told
 * whether its events arrived.
 */
export const ownerOf = (uid: string) => fnv1a32(uid).toString(36) + '.' + fnv1a32(uid, uid.length - 1, -1).toString(36)

/** The ids an event that reached the sink is remembered under: its claim, a purchase's order, and the order as the server sender's. */
export function rememberedIds(event: RelayEvent, { claim, order, verified }: DeliveryIds = deliveryIds(event)): string[] {
  if (!order) return [claim]
  return event.from_server ? [claim, order, verified!] : [claim, order]
}
