import { deliveryIds, isDelivered, ownerOf, rememberedIds, type DeliveryIds } from './dedupe'
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

/**
 * Claims a request's events in the store (dedupe.ts says under which keys), so that each reaches
 * the sink once across every instance. `server`: the request is the shop's server sender's.
 *
 * Every event is claimed for its shopper, so a duplicate is only ever the same shopper's event
 * again. A purchase is then held against what is known of its order:
 * - a page's purchase whose order the server sender named this shopper for is a duplicate; one
 *   whose order another shopper reported first, or the server named another for, is stored
 *   marked `order_conflict`, so that a forger's copy never shuts out the real one and a page
 *   learns nothing from its answer of an order that is not its shopper's;
 * - the server sender's purchase is claimed by its order, once however often the platform
 *   retries; when the shopper it names reported the order first, it is that purchase again (the
 *   first copy counts, never a doubled revenue); when another shopper did, it is stored marked
 *   `order_conflict`, the order's word for the shop to settle by.
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
    const named = deliveryIds(event, ownerOfEvent(event), server)
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
  duplicates.push(...named.filter((_, index) => states[index] == 'delivered'))

  // What is known of each fresh purchase's order: which shopper's browser reported it first, and
  // which shopper the server sender named.
  const purchases = fresh.filter((event) => ids.get(event)!.order)
  const said = await store.lookup(purchases.flatMap((event) => [ids.get(event)!.order!.reported, ids.get(event)!.order!.server]))
  const repeated = new Set<RelayEvent>()
  const firstReports = new Set<RelayEvent>()
  purchases.forEach((event, index) => {
    const reportedBy = said[2 * index]
    const serverSaid = said[2 * index + 1]
    const owner = ownerOfEvent(event)
    const repeats = server ? reportedBy == owner : serverSaid == owner
    const otherShopper = (isDelivered(reportedBy) && reportedBy != owner) || (!server && isDelivered(serverSaid) && serverSaid != owner)
    if (repeats) repeated.add(event)
    else if (otherShopper) event.order_conflict = true
    if (!server && !isDelivered(reportedBy)) firstReports.add(event)
  })
  // A page's repeat lets its claim go; the server sender's keeps it, as the order's word given (below).
  if (!server && repeated.size)
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
    // The server sender said what the shopper's browser had said: its word on the order is
    // given, and a page of another shopper's after it is a conflict.
    await mark([...repeated], (event) => rememberedIds(ids.get(event)!, false))
  }

  const order = new Map(events.map((event, index) => [event, index]))
  return {
    fresh: [...unnamed, ...fresh].sort((a, b) => order.get(a)! - order.get(b)!),
    duplicates,
    held: states.includes('claimed'),
    delivered: (done) =>
      mark(
        done.filter((event) => ids.has(event)),
        (event) => rememberedIds(ids.get(event)!, firstReports.has(event))
      ),
    release: async (failed) => {
      const claims = failed.filter((event) => ids.has(event)).map((event) => ids.get(event)!.claim)
      if (claims.length) await store.release(claims, token)
    }
  }
}
