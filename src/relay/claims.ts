import { deliveryIds, ownerOf, rememberedIds, type DeliveryIds } from './dedupe'
import type { DeliveryStore, RelayEvent } from './types'

/** What the store said of a request's events. */
export interface Claims {
  /** The events this request is to hand to the sink now, in the order they came. */
  fresh: RelayEvent[]
  /** Events stored before, or twice in this request. */
  duplicates: RelayEvent[]
  /** Whether another request holds some of them now (its sink is running). */
  held: boolean
  /** Remembers that these of the fresh events reached the sink, with their shoppers. */
  delivered(events: RelayEvent[]): Promise<void>
  /** Lets these of the fresh events go, for a resend to take them. */
  release(events: RelayEvent[]): Promise<void>
}

// A string, '' included: a store written before owners (whose lookup gave booleans) answers false for undelivered ids.
const isDelivered = (owner: unknown) => typeof owner == 'string'

/**
 * Claims a request's events in the store (dedupe.ts says under which ids), so that each reaches
 * the sink once across every instance. `server`: the request is the shop's server sender's.
 * A page's purchase of an order the server sender stored is a duplicate, and so is one of an
 * order the same shopper's browser stored before; another shopper's purchase that says something
 * else than the one stored for its order is fresh, marked `order_conflict`.
 */
export async function claimEvents(store: DeliveryStore, events: RelayEvent[], server: boolean, token: string, claimMs: number): Promise<Claims> {
  const ids = new Map<RelayEvent, DeliveryIds>()
  const duplicates: RelayEvent[] = []
  const unnamed: RelayEvent[] = []
  const firsts = new Map<string, RelayEvent>()
  for (const event of events) {
    if (!event.event_id) {
      unnamed.push(event)
      continue
    }
    const named = deliveryIds(event)
    // An id twice in one request is one event; so is a purchase of one order from one shopper
    // twice (the page's own call and the GA4 bridge in one batch), whatever each says.
    const once = named.order ? named.order + '\n' + event.user.uid : named.claim
    if (firsts.has(once)) duplicates.push(event)
    else {
      ids.set(event, named)
      firsts.set(once, event)
    }
  }
  let named = [...firsts.values()]
  // The server sender's word on an order is final: a page's purchase after it is a duplicate.
  const pagePurchases = server ? [] : named.filter((event) => ids.get(event)!.verified)
  const verified = await store.lookup(pagePurchases.map((event) => ids.get(event)!.verified!))
  const settled = new Set(pagePurchases.filter((_, index) => isDelivered(verified[index])))
  duplicates.push(...settled)
  named = named.filter((event) => !settled.has(event))

  const states = await store.claim(
    named.map((event) => ids.get(event)!.claim),
    token,
    claimMs
  )
  let fresh = named.filter((_, index) => states[index] == 'new')
  const before = named.filter((_, index) => states[index] == 'delivered')
  duplicates.push(...before)
  // The server sender said what a page had said already: that purchase is the order's word now.
  const confirmed = before.filter((event) => server && ids.get(event)!.verified)
  if (confirmed.length) await mark(confirmed, (event) => [ids.get(event)!.verified!])

  // A purchase of an order stored before: the same shopper's browser saying it again (the page's
  // own call and the GA4 bridge, the pixel) is the same purchase, whatever it says; another
  // shopper's, or the server sender's, is kept beside it as a conflict.
  const purchases = fresh.filter((event) => ids.get(event)!.order)
  const orders = await store.lookup(purchases.map((event) => ids.get(event)!.order!))
  const repeated = new Set<RelayEvent>()
  purchases.forEach((event, index) => {
    if (!isDelivered(orders[index])) return
    if (!server && orders[index] == ownerOf(event.user.uid)) repeated.add(event)
    else event.order_conflict = true
  })
  if (repeated.size)
    await store.release(
      [...repeated].map((event) => ids.get(event)!.claim),
      token
    )
  duplicates.push(...repeated)
  fresh = fresh.filter((event) => !repeated.has(event))
  if (server) fresh.forEach((event) => (event.from_server = true))

  /** Marks the ids `which` gives for each event as delivered, each with its shopper. */
  async function mark(marked: RelayEvent[], which: (event: RelayEvent) => string[]) {
    const ids: string[] = []
    const owners: string[] = []
    // A request's events are mostly one shopper's: each uid's digest is made once.
    const digests = new Map<string, string>()
    for (const event of marked) {
      const uid = event.user.uid
      const owner = digests.get(uid) ?? ownerOf(uid)
      digests.set(uid, owner)
      for (const id of which(event)) {
        ids.push(id)
        owners.push(owner)
      }
    }
    await store.delivered(ids, token, owners)
  }

  const order = new Map(events.map((event, index) => [event, index]))
  return {
    fresh: [...unnamed, ...fresh].sort((a, b) => order.get(a)! - order.get(b)!),
    duplicates,
    held: states.includes('claimed'),
    delivered: (done) =>
      mark(
        done.filter((event) => ids.has(event)),
        (event) => rememberedIds(event, ids.get(event))
      ),
    release: async (failed) => {
      const claims = failed.filter((event) => ids.has(event)).map((event) => ids.get(event)!.claim)
      if (claims.length) await store.release(claims, token)
    }
  }
}
