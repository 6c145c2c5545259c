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
const isDelivered = (owner: unknown): owner is string => typeof owner == 'string'

/**
 * Claims a request's events in the store (dedupe.ts says under which keys), so that each reaches
 * the sink once across every instance. `server`: the request is the shop's server sender's.
 *
 * Every event is claimed for its shopper, so a duplicate is only ever the same shopper's event
 * again. A purchase is then held against what its order's keys say: the same shopper's browser
 * or the server sender having reported the order makes it a duplicate, whatever it says (the
 * page's own call beside the GA4 bridge, the pixel, the order webhook); another shopper's word
 * on the order leaves it fresh, marked `order_conflict`, so that a forger's copy never shuts
 * out the real one and a page learns nothing of an order that is not its shopper's.
 */
export async function claimEvents(store: DeliveryStore, events: RelayEvent[], server: boolean, token: string, claimMs: number): Promise<Claims> {
  // A request's events are mostly one shopper's: each uid's digest is made once.
  const owners = new Map<string, string>()
  const ownerOfEvent = (event: RelayEvent) => {
    let owner = owners.get(event.user.uid)
    if (owner === undefined) owners.set(event.user.uid, (owner = ownerOf(event.user.uid)))
    return owner
  }
  const ids = new Map<RelayEvent, DeliveryIds>()
  const claimed = new Set<string>()
  const duplicates: RelayEvent[] = []
  const unnamed: RelayEvent[] = []
  for (const event of events) {
    if (!event.event_id) {
      unnamed.push(event)
      continue
    }
    const named = deliveryIds(event, ownerOfEvent(event))
    // An id twice in one request from one shopper is one event.
    if (claimed.has(named.claim)) duplicates.push(event)
    else {
      ids.set(event, named)
      claimed.add(named.claim)
    }
  }

  const named = [...ids.keys()]
  const states = await store.claim(
    named.map((event) => ids.get(event)!.claim),
    token,
    claimMs
  )
  let fresh = named.filter((_, index) => states[index] == 'new')
  const before = named.filter((_, index) => states[index] == 'delivered')
  duplicates.push(...before)

  // What is known of each fresh purchase's order: which shopper's browser reported it, and which
  // shopper the server sender named.
  const purchases = fresh.filter((event) => ids.get(event)!.order)
  const said = await store.lookup(purchases.flatMap((event) => [ids.get(event)!.order!.reported, ids.get(event)!.order!.server]))
  const repeated = new Set<RelayEvent>()
  purchases.forEach((event, index) => {
    const reportedBy = said[2 * index]
    const serverSaid = said[2 * index + 1]
    const owner = ownerOfEvent(event)
    // The server sender speaks once per order (its topics, its retries); a shopper's browser once per shopper.
    const repeats = reportedBy == owner || (isDelivered(serverSaid) && (server || serverSaid == owner))
    if (repeats) repeated.add(event)
    else if (isDelivered(serverSaid) || isDelivered(reportedBy)) event.order_conflict = true
  })
  if (repeated.size)
    await store.release(
      [...repeated].map((event) => ids.get(event)!.claim),
      token
    )
  duplicates.push(...repeated)
  fresh = fresh.filter((event) => !repeated.has(event))

  /** Marks `keys` of each event as delivered, each with its shopper. */
  const mark = async (marked: RelayEvent[], keys: (event: RelayEvent) => string[]) => {
    const markedKeys: string[] = []
    const markedOwners: string[] = []
    for (const event of marked) {
      for (const key of keys(event)) {
        markedKeys.push(key)
        markedOwners.push(ownerOfEvent(event))
      }
    }
    if (markedKeys.length) await store.delivered(markedKeys, token, markedOwners)
  }

  if (server) {
    fresh.forEach((event) => (event.from_server = true))
    // The server sender said what was said already: its word on the order is given, and a page
    // of another shopper's after it is a conflict.
    await mark(
      duplicates.filter((event) => ids.get(event)?.order),
      (event) => [ids.get(event)!.order!.server]
    )
  }

  const order = new Map(events.map((event, index) => [event, index]))
  return {
    fresh: [...unnamed, ...fresh].sort((a, b) => order.get(a)! - order.get(b)!),
    duplicates,
    held: states.includes('claimed'),
    delivered: (done) =>
      mark(
        done.filter((event) => ids.has(event)),
        (event) => rememberedIds(event, ids.get(event)!)
      ),
    release: async (failed) => {
      const claims = failed.filter((event) => ids.has(event)).map((event) => ids.get(event)!.claim)
      if (claims.length) await store.release(claims, token)
    }
  }
}
