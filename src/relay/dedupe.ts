/*
 * Under which keys the store remembers events. An event id is the sender's word, and anyone can
 * send any word, so no id a sender gives may reach a key that means something else:
 *
 * - Every key starts with a digest of the API key: shop A's events never make shop B's duplicates.
 * - An event is claimed and remembered for its shopper: "<scope>.e.<owner>.<event id>", the owner
 *   a digest of its uid. A shopper's resend is a duplicate; the same id from another shopper is
 *   not, so no answer tells one shopper anything of another's events.
 * - What the relay derives for itself lives in namespaces no event id reaches, since an event id
 *   only ever follows "e.<owner>.": "<scope>.o.<event id>", a shopper's browser reported this
 *   order; "<scope>.s.<event id>", the shop's server sender did.
 *
 * The scope is one base-36 number and the owner two joined by a dot, so the parts of a key never
 * run together into another key: the kind is always the second part, the event id always what
 * follows the owner.
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

/** The key an event of `owner` with this id is claimed and remembered under. */
export const eventKey = (apiKey: string, owner: string, eventId: string) => scopeOf(apiKey) + '.e.' + owner + '.' + eventId

/** The keys the relay derives for a purchase's order. */
export interface OrderKeys {
  /** A shopper's browser (page, pixel, GA4 bridge) reported the order: remembered with that shopper. */
  reported: string
  /** The shop's server sender reported the order: remembered with the shopper it named. */
  server: string
}

/** The keys of the order a purchase with this event id reports (its id is the order's, shared/order-event-id.ts). */
export const orderKeys = (apiKey: string, eventId: string): OrderKeys => ({
  reported: scopeOf(apiKey) + '.o.' + eventId,
  server: scopeOf(apiKey) + '.s.' + eventId
})

/** The keys an event that has an id is claimed and remembered under (events without one are never deduplicated). */
export interface DeliveryIds {
  /** The event's own key, for its shopper: claimed before the sink runs. */
  claim: string
  /** A purchase's order. */
  order?: OrderKeys
}

/** The keys of an event with an event id, sent by the shopper `owner`. */
export function deliveryIds(event: Envelope, owner = ownerOf(event.user.uid)): DeliveryIds {
  const claim = eventKey(event.key, owner, event.event_id)
  return event.event == 'purchase' ? { claim, order: orderKeys(event.key, event.event_id) } : { claim }
}

/** The keys an event that reached the sink is remembered under: its own, and a purchase's order as the browser's or as the server's word. */
export function rememberedIds(event: { from_server?: true }, { claim, order }: DeliveryIds): string[] {
  if (!order) return [claim]
  return [claim, event.from_server ? order.server : order.reported]
}
