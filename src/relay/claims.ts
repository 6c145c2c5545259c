import type { EventProperties } from '../shared/types'
import { deliveryIds, ownerOf, rememberedIds, type DeliveryIds } from './dedupe'
import { judgePurchases, pendingOrders } from './order-claims'
import { figuresOf } from './order-figures'
import type { DeliveryStore, OrderReport, RelayEvent } from './types'

/** What the store said of a request's events. */
export interface Claims {
  /** The events this request is to hand to the sink now, in the order they came. */
  fresh: RelayEvent[]
  /** Events stored before, or twice in this request. */
  duplicates: RelayEvent[]
  /** Whether another request holds some of them now (its sink is running). */
  held: boolean
  /** The purchases' parts in their orders' coverage (order-reports.ts): those of fresh events count once the sink took them. */
  orders: OrderReport[]
  /** Remembers that these of the fresh events reached the sink, with their shoppers. */
  delivered(events: RelayEvent[]): Promise<void>
  /** Lets these of the fresh events go, for a resend to take them. */
  release(events: RelayEvent[]): Promise<void>
}

/** A store key and the value it is remembered with: an owner, or an order's figures. */
type Mark = [key: string, value: string]

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

/** The store's writes for one request (`token`), each key with its value. */
function storeWrites(store: DeliveryStore, token: string) {
  return {
    async remember(marks: Mark[]) {
      if (marks.length)
        await store.delivered(
          marks.map(([key]) => key),
          token,
          marks.map(([, value]) => value)
        )
    },
    async release(keys: string[]) {
      if (keys.length) await store.release(keys, token)
    }
  }
}

/**
 * Claims a request's events in the store (dedupe.ts says under which keys), so that each reaches
 * the sink once across every instance. `server`: the request is the shop's server sender's.
 *
 * Every event is claimed for its shopper, so a duplicate is only ever the same shopper's event
 * again. A purchase is then held against what is known of its order (order-reports.ts):
 * - a page's purchase whose order the server sender named this shopper for is a duplicate; one
 *   whose order another shopper reported first, or the server named another for, is stored
 *   marked `order_conflict`, so that a forger's copy never shuts out the real one and a page
 *   learns nothing from its answer of an order that is not its shopper's;
 * - the server sender's purchase is claimed by its order, once however often the platform
 *   retries; when the shopper it names reported the order first, it is that purchase again
 *   whatever its fields say (the first copy counts, never a doubled revenue; where it differs,
 *   the difference is counted); when another shopper did, it is stored marked `order_conflict`,
 *   the order's word for the shop to settle by.
 *
 * A purchase whose order another request is storing now waits for it (order-claims.ts): the
 * request is answered 503, and its resend is judged by what the other left.
 */
export async function claimEvents(store: DeliveryStore, events: RelayEvent[], server: boolean, token: string, claimMs: number): Promise<Claims> {
  const ownerOfEvent = ownersOf()
  const writes = storeWrites(store, token)
  const { ids, duplicates, unnamed } = namedEvents(events, ownerOfEvent, server)
  const named = [...ids.keys()]
  const pending = pendingOrders(named, ids)
  const asked = [...named.map((event) => ids.get(event)!.claim), ...pending.keys]
  const states = await store.claim(asked, token, claimMs)
  const waiting = pending.waitingOf(states, server)
  let fresh = named.filter((event, index) => states[index] == 'new' && !waiting.has(event))
  const seen = new Set(named.filter((event, index) => states[index] == 'delivered' && !waiting.has(event)))
  duplicates.push(...seen)
  // Each purchase against what is known of its order: the fresh ones, and a page's whose
  // shopper's claim was delivered (by the server sender, or a reload).
  const purchases = named.filter((event) => ids.get(event)!.order && (fresh.includes(event) || (!server && seen.has(event))))
  // The store failing here (a cluster slot without a master) answers the request 503: what it
  // claimed is let go now, so that the resend need not wait out the claims.
  const judged = await judgePurchases(store, purchases, seen, ids, server, ownerOfEvent).catch(async (error) => {
    await store.release(asked, token).catch(() => {})
    throw error
  })
  const repeated = fresh.filter((event) => judged.get(event)?.repeats)
  for (const [event, judgement] of judged) if (judgement.conflict) event.order_conflict = true
  duplicates.push(...repeated)
  fresh = fresh.filter((event) => !repeated.includes(event))

  const orderOf = (event: RelayEvent) => ids.get(event)!.order!
  const owned = (event: RelayEvent, keys: string[]): Mark[] => keys.map((key) => [key, ownerOfEvent(event)])
  const marksNow: Mark[] = []
  if (server) {
    fresh.forEach((event) => (event.from_server = true))
    // The server sender said what the shopper's browser had said: its word on the order is
    // given, and a page of another shopper's after it is a conflict.
    for (const event of repeated) marksNow.push(...owned(event, rememberedIds(ids.get(event)!, false)))
  }
  // A browser's first report of an order that goes to no sink (the server's purchase of its
  // shopper is stored): the order is reported now, so that a reload is not its report again.
  for (const [event, judgement] of judged) if (judgement.firstReport && !fresh.includes(event)) marksNow.push([orderOf(event).reported, ownerOfEvent(event)])
  await writes.remember(marksNow)
  // Then let go: a page's repeats (the server sender's keep theirs, as the order's word given),
  // the new purchases that wait for their order, and the orders no fresh purchase is of.
  const waitingClaims = named.filter((event, index) => waiting.has(event) && states[index] == 'new')
  await writes.release([...(server ? [] : repeated), ...waitingClaims].map((event) => ids.get(event)!.claim).concat(pending.unneeded(fresh)))

  const order = new Map(events.map((event, index) => [event, index]))
  const firstCopies = new Set([...judged].filter(([, judgement]) => judgement.report?.order == 'first').map(([event]) => event))
  /** What is remembered of a fresh event the sink took: its keys with its shopper and, for an order's first copy, its figures, for the other reporter's copy to be compared with. */
  const marksOf = (event: RelayEvent): Mark[] => [
    ...owned(event, rememberedIds(ids.get(event)!, !!judged.get(event)?.firstReport)),
    ...(firstCopies.has(event) ? [[orderOf(event).figures, figuresOf(event.properties as EventProperties['purchase'])] as Mark] : [])
  ]
  return {
    fresh: [...unnamed, ...fresh].sort((a, b) => order.get(a)! - order.get(b)!),
    duplicates,
    held: states.slice(0, named.length).includes('claimed') || waiting.size > 0,
    orders: [...judged].flatMap(([event, { report }]) => (report ? [{ event, ...report }] : [])),
    async delivered(done) {
      const marked = done.filter((event) => ids.has(event))
      await writes.remember(marked.flatMap(marksOf))
      // Only once the order's keys are written may another request's purchase of it read them.
      await writes.release(pending.of(marked))
    },
    release: async (failed) => {
      const claimed = failed.filter((event) => ids.has(event))
      await writes.release(claimed.map((event) => ids.get(event)!.claim).concat(pending.of(claimed)))
    }
  }
}
