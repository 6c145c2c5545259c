import type { EventProperties } from '../shared/types'
import { isDelivered } from './dedupe'
import { differingFields, figuresOf } from './order-figures'
import type { OrderReport, RelayEvent } from './types'

/*
 * What a copy of a purchase makes of its order, from what the store knows of the order: which
 * shopper's browser (page, pixel, GA4 bridge) reported it first, which shopper the shop's server
 * sender (the order webhooks) named, and the figures of its first copy. From it the relay decides
 * whether the copy is the same purchase again or another shopper's, and counts the order's
 * coverage: each order once when its first copy reaches the sink, by who sent it, and once more
 * when the other reporter's copy comes (df_relay_order_reports_total), so that a shop reads what
 * share of its orders the browser alone would have lost (docs/guide/order-webhooks.md).
 */

/** What the store's lookup found of an order: each an owner, `true` (delivered, owner unknown) or null. */
export interface OrderState {
  reportedBy: string | true | null
  serverSaid: string | true | null
  figures: string | true | null
}

/** What one copy makes of its order. */
export interface OrderJudgement {
  /** The same shopper's purchase of the order, reported before by the other reporter: a duplicate. */
  repeats: boolean
  /** Another shopper reported the order first, or the server sender named another: stored beside, marked `order_conflict`. */
  conflict: boolean
  /** A browser's first report of the order: the order is remembered as reported by its shopper. */
  firstReport: boolean
  /** Its part in the coverage, if it has one (a reload has none). */
  report?: Omit<OrderReport, 'event'>
}

const as = (value: string | true | null) => (isDelivered(value) ? value : null)

/** The differences of a copy of the same shopper's order from the order's first figures. */
const differencesOf = (event: RelayEvent, figures: string | true | null) =>
  typeof figures == 'string' ? differingFields(figures, figuresOf(event.properties as EventProperties['purchase'])) : []

/** What a fresh copy (its claim was new) sent by `owner` makes of its order; `server`: the shop's server sender sent it. */
export function judgeFresh(event: RelayEvent, state: OrderState, owner: string, server: boolean): OrderJudgement {
  const reportedBy = as(state.reportedBy)
  const serverSaid = as(state.serverSaid)
  if (server) {
    const repeats = reportedBy == owner
    const conflict = !repeats && reportedBy != null
    const differences = repeats ? differencesOf(event, state.figures) : []
    return { repeats, conflict, firstReport: false, report: { reporter: 'server', order: reportedBy != null ? 'second' : 'first', differences } }
  }
  const repeats = serverSaid == owner
  const conflict = !repeats && ((reportedBy != null && reportedBy != owner) || (serverSaid != null && serverSaid != owner))
  const firstReport = reportedBy == null
  if (!firstReport) return { repeats, conflict, firstReport }
  const differences = repeats ? differencesOf(event, state.figures) : []
  return { repeats, conflict, firstReport, report: { reporter: 'browser', order: serverSaid != null ? 'second' : 'first', differences } }
}

/**
 * What a browser's copy whose shopper's claim was delivered already makes of its order: a reload
 * in all but one case, that the server sender reported the order for this shopper and no
 * browser had yet. Then it is the order's second report, and its browser's first.
 */
export function judgeSeen(event: RelayEvent, state: OrderState, owner: string): OrderJudgement | undefined {
  if (as(state.reportedBy) != null || as(state.serverSaid) != owner) return undefined
  return {
    repeats: true,
    conflict: false,
    firstReport: true,
    report: { reporter: 'browser', order: 'second', differences: differencesOf(event, state.figures) }
  }
}
