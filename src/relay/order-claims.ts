/*
 * What the relay decides of a request's purchases by their order (dedupe.ts names the keys).
 * Which shopper reported an order first, whom the server sender named, and the figures of its
 * first copy are read before a purchase is judged (order-reports.ts) and written once its sink
 * answered; two requests with purchases of one order in between would each read nothing: both
 * stored unmarked, or a webhook's copy stored beside its shopper's page's, the order counted
 * twice. So a request claims each order's `pending` key beside its purchases, and one whose
 * order another request is storing waits for it (503, as for an event another request holds),
 * and then reads what that one left. Within one request, its purchases are judged in their
 * order, the earlier as reported before the later.
 */
import { isDelivered, type DeliveryIds } from './dedupe'
import { judgeFresh, judgeSeen, type OrderJudgement, type OrderState } from './order-reports'
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
     * to be judged whose order another request is storing now, which wait. Judged are the new
     * ones and, from a page (`server` false), those its shopper's claim shows delivered, since
     * such a copy may be the order's second report (order-reports.ts judgeSeen).
     */
    waitingOf(states: ClaimState[], server: boolean): Set<RelayEvent> {
      taken = new Set(keys.filter((_, index) => states[named.length + index] == 'new'))
      const judged = (index: number) => states[index] == 'new' || (!server && states[index] == 'delivered')
      return new Set(named.filter((event, index) => judged(index) && pendingOf(ids, event) !== undefined && !taken.has(pendingOf(ids, event)!)))
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

/** What the store knows of each purchase's order: three keys each, in one lookup. */
async function orderStates(store: DeliveryStore, purchases: RelayEvent[], ids: Map<RelayEvent, DeliveryIds>): Promise<OrderState[]> {
  const said = await store.lookup(
    purchases.flatMap((event) => [ids.get(event)!.order!.reported, ids.get(event)!.order!.server, ids.get(event)!.order!.figures])
  )
  return purchases.map((_, index) => ({ reportedBy: said[3 * index], serverSaid: said[3 * index + 1], figures: said[3 * index + 2] }))
}

/**
 * Judges each purchase of `purchases` (in the request's order) against what is known of its
 * order: by judgeFresh, or by judgeSeen for those in `seen` (a page's whose shopper's claim was
 * delivered). A page's purchase that reports its order first counts, for the later ones of the
 * same request, as the order's report.
 */
export async function judgePurchases(
  store: DeliveryStore,
  purchases: RelayEvent[],
  seen: Set<RelayEvent>,
  ids: Map<RelayEvent, DeliveryIds>,
  server: boolean,
  ownerOf: (event: RelayEvent) => string
): Promise<Map<RelayEvent, OrderJudgement>> {
  const known = await orderStates(store, purchases, ids)
  const judged = new Map<RelayEvent, OrderJudgement>()
  // The shopper whose page's purchase earlier in this request reports each order first.
  const reportedHere = new Map<string, string>()
  purchases.forEach((event, index) => {
    const reported = ids.get(event)!.order!.reported
    const state = { ...known[index], reportedBy: isDelivered(known[index].reportedBy) ? known[index].reportedBy : (reportedHere.get(reported) ?? null) }
    const owner = ownerOf(event)
    const judgement = seen.has(event) ? judgeSeen(event, state, owner) : judgeFresh(event, state, owner, server)
    if (!judgement) return
    judged.set(event, judgement)
    if (!server && judgement.firstReport && !reportedHere.has(reported)) reportedHere.set(reported, owner)
  })
  return judged
}
