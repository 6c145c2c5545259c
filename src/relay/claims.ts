import { deliveryIds, ownerOf, rememberedIds, type DeliveryIds } from './dedupe'
import { judgePurchases, pendingOrders } from './order-claims'
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

/** The owner (dedupe.ts) of an event's shopper: a request's events are mostly one shopper's, so each uid's digest is made once. */
function ownersOf() {
  const owners = new Map<string, string>()
  return (event: RelayEvent) => {
    let owner = owners.get(event.user.uid)
    if (owner === undefined) owners.set(event.user.uid, (owner = ownerOf(event.user.uid)))
    return owner
  }
}

/** A request's events by their keys: those with an id, each once; the second of an id from one shopper, a duplicate; those without. */
function namedEvents(events: RelayEvent[], ownerOfEvent: (event: RelayEvent) => string, server: boolean) {
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
  return { ids, duplicates, unnamed }
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
 *
 * A purchase whose order another request is storing now waits for it (order-claims.ts): the
 * request is answered 503, and its resend is judged by what the other left.
 */
export async function claimEvents(store: DeliveryStore, events: RelayEvent[], server: boolean, token: string, claimMs: number): Promise<Claims> {
  const ownerOfEvent = ownersOf()
  const { ids, duplicates, unnamed } = namedEvents(events, ownerOfEvent, server)
  const named = [...ids.keys()]
  const orders = pendingOrders(named, ids)
  const asked = [...named.map((event) => ids.get(event)!.claim), ...orders.keys]
  const states = await store.claim(asked, token, claimMs)
  const waiting = orders.waitingOf(states)
  let fresh = named.filter((event, index) => states[index] == 'new' && !waiting.has(event))
  duplicates.push(...named.filter((_, index) => states[index] == 'delivered'))
  // The store failing here (a cluster slot without a master) answers the request 503: what it
  // claimed is let go now, so that the resend need not wait out the claims.
  const { repeated, firstReports } = await judgePurchases(store, fresh, ids, server, ownerOfEvent).catch(async (error) => {
    await store.release(asked, token).catch(() => {})
    throw error
  })
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
  const release = async (keys: string[]) => {
    if (keys.length) await store.release(keys, token)
  }

  if (server) {
    fresh.forEach((event) => (event.from_server = true))
    // The server sender said what the shopper's browser had said: its word on the order is
    // given, and a page of another shopper's after it is a conflict.
    await mark([...repeated], (event) => rememberedIds(ids.get(event)!, false))
  }
  // Let go now: a page's repeats (the server sender's keep theirs, as the order's word given),
  // the purchases that wait for their order, and the orders no fresh purchase is of.
  await release([...(server ? [] : repeated), ...waiting].map((event) => ids.get(event)!.claim).concat(orders.unneeded(fresh)))

  const order = new Map(events.map((event, index) => [event, index]))
  return {
    fresh: [...unnamed, ...fresh].sort((a, b) => order.get(a)! - order.get(b)!),
    duplicates,
    held: states.slice(0, named.length).includes('claimed') || waiting.size > 0,
    async delivered(done) {
      const marked = done.filter((event) => ids.has(event))
      await mark(marked, (event) => rememberedIds(ids.get(event)!, firstReports.has(event)))
      // Only once the order's keys are written may another request's purchase of it read them.
      await release(orders.of(marked))
    },
    release: async (failed) => {
      const claimed = failed.filter((event) => ids.has(event))
      await release(claimed.map((event) => ids.get(event)!.claim).concat(orders.of(claimed)))
    }
  }
}
