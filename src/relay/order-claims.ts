/*
 * What the relay decides of a request's purchases by their order (dedupe.ts names the keys).
 * Which shopper reported an order first, and whom the server sender named, is read before a
 * purchase is stored and written once its sink answered; two requests with purchases of one
 * order in between would each read nothing and both be stored unmarked. So a request claims
 * each order's `pending` key beside its purchases, and one whose order another request is
 * storing waits for it (503, as for an event another request holds), and then reads what that
 * one left. Within one request, its purchases are judged in their order, the earlier as
 * reported before the later.
 */
import { isDelivered, type DeliveryIds } from './dedupe'
import type { ClaimState, DeliveryStore, RelayEvent } from './types'

const pendingOf = (ids: Map<RelayEvent, DeliveryIds>, event: RelayEvent) => ids.get(event)?.order?.pending

/** The orders of a request's purchases (`named`, with their `ids`), each claimed once however many purchases of it the request carries. */
export function pendingOrders(named: RelayEvent[], ids: Map<RelayEvent, DeliveryIds>) {
  const keys = [...new Set(named.map((event) => pendingOf(ids, event)).filter((key) => key !== undefined))]
  let taken = new Set<string>()
  const takenOf = (events: RelayEvent[]) => [...new Set(events.map((event) => pendingOf(ids, event)).filter((key): key is string => !!key && taken.has(key)))]
  return {
    /** The keys to claim after the events' own. */
    keys,
    /**
     * Reads the states of one claim of the events' own keys followed by `keys`: the purchases
     * that are new but whose order another request is storing now, which wait.
     */
    waitingOf(states: ClaimState[]): Set<RelayEvent> {
      taken = new Set(keys.filter((_, index) => states[named.length + index] == 'new'))
      return new Set(named.filter((event, index) => states[index] == 'new' && pendingOf(ids, event) !== undefined && !taken.has(pendingOf(ids, event)!)))
    },
    /** The keys this request took of the orders of `events`, to let go once their sink answered. */
    of: takenOf,
    /** The keys this request took that no purchase in `fresh` needs, to let go at once. */
    unneeded(fresh: RelayEvent[]): string[] {
      const needed = new Set(takenOf(fresh))
      return [...taken].filter((key) => !needed.has(key))
    }
  }
}

/**
 * Holds each fresh purchase against what is known of its order (claims.ts says the rules):
 * returns those that repeat a purchase the order has (duplicates), and a page's that report their
 * order first; marks the others' conflicts.
 */
export async function judgePurchases(
  store: DeliveryStore,
  fresh: RelayEvent[],
  ids: Map<RelayEvent, DeliveryIds>,
  server: boolean,
  ownerOf: (event: RelayEvent) => string
) {
  // What is known of each fresh purchase's order: which shopper's browser reported it first, and
  // which shopper the server sender named.
  const purchases = fresh.filter((event) => ids.get(event)!.order)
  const said = await store.lookup(purchases.flatMap((event) => [ids.get(event)!.order!.reported, ids.get(event)!.order!.server]))
  const repeated = new Set<RelayEvent>()
  const firstReports = new Set<RelayEvent>()
  // The shopper whose page's purchase earlier in this request reports each order first.
  const reportedHere = new Map<string, string>()
  purchases.forEach((event, index) => {
    const order = ids.get(event)!.order!
    const reportedBy = isDelivered(said[2 * index]) ? said[2 * index] : (reportedHere.get(order.reported) ?? null)
    const serverSaid = said[2 * index + 1]
    const owner = ownerOf(event)
    const repeats = server ? reportedBy == owner : serverSaid == owner
    const otherShopper = (isDelivered(reportedBy) && reportedBy != owner) || (!server && isDelivered(serverSaid) && serverSaid != owner)
    if (repeats) repeated.add(event)
    else if (otherShopper) event.order_conflict = true
    if (server || repeats) return
    if (!isDelivered(reportedBy)) firstReports.add(event)
    if (!reportedHere.has(order.reported)) reportedHere.set(order.reported, owner)
  })
  return { repeated, firstReports }
}
