/*
 * The answer to `?unconfirmed=` (docs/reference/collector-protocol.md): of the event ids a
 * tracker handed over unconfirmed, those it must send again.
 */
import { uidFromCookieHeader } from '../shared/uid-cookie'
import { isDelivered, ownerOf, shopperKey } from './dedupe'
import type { DeliveryStore, RelayEvent } from './types'

// A request may ask about this many unconfirmed ids (the tracker asks about 50).
const MAX_UNCONFIRMED = 200
// The shoppers one request may ask for: its cookie's and its events' uids, a tracker's own being one or two.
const MAX_ASKERS = 2

/**
 * The shoppers a request speaks for, by their owner digests: the uid cookie it carried (a
 * relay on the shop's own domain gets it) and the uids of its events; the first few, since
 * each is a store read for every id asked about, and a tracker's request speaks for one.
 */
function askers(request: Request, events: RelayEvent[]): string[] {
  const uid = uidFromCookieHeader(request.headers.get('cookie'))
  return [...new Set([...(uid ? [uid] : []), ...events.map((event) => event.user.uid)])].slice(0, MAX_ASKERS).map(ownerOf)
}

/**
 * Makes the function that answers a request's `?unconfirmed=` from `store`, under each of the
 * relay's `keys`. Events are remembered per shopper (dedupe.ts), so only an id stored for one of
 * the asking shoppers counts as arrived: of anyone else's, the answer is "missing" whether it
 * arrived or not, so that nobody learns whether another shopper's order was placed (a resend is
 * a duplicate, and stored once).
 */
export function unconfirmedAnswer(store: DeliveryStore, keys: string[]) {
  async function unconfirmedOf(asked: string[], owners: string[]): Promise<string[]> {
    if (!asked.length || !owners.length) return asked
    // The question names no key: each id is looked up under every key the relay takes, for every asker.
    const perId = keys.length * owners.length
    const found = await store.lookup(asked.flatMap((id) => keys.flatMap((key) => owners.map((owner) => shopperKey(key, owner, id)))))
    return asked.filter((_, index) => !found.slice(index * perId, (index + 1) * perId).some(isDelivered))
  }

  /** The ids of `question` (the query's comma-separated list) that never arrived for the request's shoppers. */
  return (question: string, request: Request, events: RelayEvent[]): Promise<string[]> =>
    unconfirmedOf(question.split(',').filter(Boolean).slice(0, MAX_UNCONFIRMED), askers(request, events))
}
