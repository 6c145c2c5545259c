import type { EventProperties } from '../shared/types'
import { deliveryIds, ownerOf, rememberedIds, type DeliveryIds } from './dedupe'
import { figuresOf } from './order-figures'
import { judgeFresh, judgeSeen, type OrderJudgement, type OrderState } from './order-reports'
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

/** Remembers keys as delivered, each with its value. */
const remember = async (store: DeliveryStore, token: string, marks: Mark[]) => {
  if (marks.length)
    await store.delivered(
      marks.map(([key]) => key),
      token,
      marks.map(([, value]) => value)
    )
}

/** What the store knows of each purchase's order: three keys each, in one lookup. */
async function orderStates(store: DeliveryStore, purchases: RelayEvent[], ids: Map<RelayEvent, DeliveryIds>): Promise<OrderState[]> {
  const said = await store.lookup(
    purchases.flatMap((event) => [ids.get(event)!.order!.reported, ids.get(event)!.order!.server, ids.get(event)!.order!.figures])
  )
  return purchases.map((_, index) => ({ reportedBy: said[3 * index], serverSaid: said[3 * index + 1], figures: said[3 * index + 2] }))
}

/** The request's events with an event id, each under its claim (dedupe.ts); an id twice in one request from one shopper is one event. */
function named(events: RelayEvent[], ownerOfEvent: (event: RelayEvent) => string, server: boolean) {
  const ids = new Map<RelayEvent, DeliveryIds>()
  const claimed = new Set<string>()
  const twice: RelayEvent[] = []
  const unnamed: RelayEvent[] = []
  for (const event of events) {
    if (!event.event_id) unnamed.push(event)
    else {
      const keys = deliveryIds(event, ownerOfEvent(event), server)
      if (claimed.has(keys.claim)) twice.push(event)
      else {
        ids.set(event, keys)
        claimed.add(keys.claim)
      }
    }
  }
  return { ids, twice, unnamed }
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
 */
export async function claimEvents(store: DeliveryStore, events: RelayEvent[], server: boolean, token: string, claimMs: number): Promise<Claims> {
  // A request's events are mostly one shopper's: each uid's digest is made once.
  const owners = new Map<string, string>()
  const ownerOfEvent = (event: RelayEvent) => {
    let owner = owners.get(event.user.uid)
    if (owner === undefined) owners.set(event.user.uid, (owner = ownerOf(event.user.uid)))
    return owner
  }
  const { ids, twice, unnamed } = named(events, ownerOfEvent, server)
  const claimedEvents = [...ids.keys()]
  const states = await store.claim(
    claimedEvents.map((event) => ids.get(event)!.claim),
    token,
    claimMs
  )
  let fresh = claimedEvents.filter((_, index) => states[index] == 'new')
  const seen = claimedEvents.filter((_, index) => states[index] == 'delivered')
  const duplicates = [...twice, ...seen]

  // Each purchase against what is known of its order: the fresh ones, and a page's whose shopper's claim was delivered (by the server sender, or a reload).
  const freshPurchases = fresh.filter((event) => ids.get(event)!.order)
  const seenPurchases = server ? [] : seen.filter((event) => ids.get(event)!.order)
  const known = await orderStates(store, [...freshPurchases, ...seenPurchases], ids)
  const judged = new Map<RelayEvent, OrderJudgement>()
  freshPurchases.forEach((event, index) => judged.set(event, judgeFresh(event, known[index], ownerOfEvent(event), server)))
  seenPurchases.forEach((event, index) => {
    const judgement = judgeSeen(event, known[freshPurchases.length + index], ownerOfEvent(event))
    if (judgement) judged.set(event, judgement)
  })
  const repeated = freshPurchases.filter((event) => judged.get(event)!.repeats)
  for (const event of freshPurchases) if (judged.get(event)!.conflict) event.order_conflict = true
  // A page's repeat lets its claim go; the server sender's keeps it, as the order's word given (below).
  if (!server && repeated.length)
    await store.release(
      repeated.map((event) => ids.get(event)!.claim),
      token
    )
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
  await remember(store, token, marksNow)

  const order = new Map(events.map((event, index) => [event, index]))
  const firstCopies = new Set([...judged].filter(([, judgement]) => judgement.report?.order == 'first').map(([event]) => event))
  return {
    fresh: [...unnamed, ...fresh].sort((a, b) => order.get(a)! - order.get(b)!),
    duplicates,
    held: states.includes('claimed'),
    orders: [...judged].flatMap(([event, { report }]) => (report ? [{ event, ...report }] : [])),
    delivered: (done) =>
      remember(
        store,
        token,
        done
          .filter((event) => ids.has(event))
          .flatMap((event): Mark[] => [
            ...owned(event, rememberedIds(ids.get(event)!, !!judged.get(event)?.firstReport)),
            // The order's first copy: its figures, for the other reporter's copy to be compared with.
            ...(firstCopies.has(event) ? [[orderOf(event).figures, figuresOf(event.properties as EventProperties['purchase'])] as Mark] : [])
          ])
      ),
    release: async (failed) => {
      const claims = failed.filter((event) => ids.has(event)).map((event) => ids.get(event)!.claim)
      if (claims.length) await store.release(claims, token)
    }
  }
}
