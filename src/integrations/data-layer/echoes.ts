import { attempt } from '../../shared/attempt'
import { encode } from '../../shared/json'
import type { EventName } from '../../shared/types'

/*
 * Events the shop tracks itself, through the same tracker, next to the data layer's: a tile
 * with `data-df-*` attributes whose click also pushes select_item, a cart page that calls
 * updateCart() and pushes view_cart. Each such pair is sent once: the second, whichever way it
 * came, is dropped when it repeats the last click (or the last cart) within ECHO_MS of the moment
 * that one reached the tracker. Purchases need none of this (one event id per order), nor
 * view-pages (views.ts).
 */

const ECHO_MS = 2000

/** Which way an event came: through the bridge, or through the shop's own call. */
export type Source = 'bridge' | 'shop'

type Properties = Record<string, unknown>

const sameId = (one: unknown, other: unknown) => typeof one == 'string' && one == other

/** A cart's lines in a form that does not depend on the order of their fields, nor of the lines. */
const cartOf = (lines: unknown) =>
  encode((lines as Properties[]).map((line) => encode([line.item_id, line.variant_item_id, line.unit_price, line.quantity])).sort())

/**
 * Whether two events are one: clicks on the same product, known by either id (the shop's ids and
 * the bridge's may differ in one of them: GA4's item_id is often the variant's SKU), or carts with
 * the same lines.
 */
function sameEvent(event: EventName, one: Properties, other: Properties): boolean {
  if (event == 'click-item') return sameId(one.item_id, other.item_id) || sameId(one.variant_item_id, other.variant_item_id)
  return cartOf(one.line_items) == cartOf(other.line_items)
}

/** The last click and the last cart, and which way each came. */
export function createEchoes() {
  // `at` is undefined while the event waits in the script tag's queue for the tracker to load.
  const last: Partial<Record<EventName, { properties: Properties; source: Source; at?: number }>> = {}
  const echoed = (event: EventName) => event == 'click-item' || event == 'update-cart'
  return {
    /**
     * Whether this event repeats, from the other source, the last event of its kind within
     * ECHO_MS (or while that one waits in the queue). An echo is dropped, and one echo answers
     * one event: a third is a new one.
     */
    isEcho(event: EventName, properties: unknown, source: Source): boolean {
      const before = last[event]
      if (!echoed(event) || !before || before.source == source) return false
      if (before.at !== undefined && Date.now() - before.at >= ECHO_MS) return false
      // Properties that cannot be read (a getter that throws, a cycle) are the tracker's to refuse.
      if (!attempt(() => sameEvent(event, before.properties, properties as Properties))) return false
      last[event] = undefined
      return true
    },
    /** This event went to the tracker: it is the last of its kind. `queued`: it waits for the tracker to load. */
    record(event: EventName, properties: unknown, source: Source, queued = false) {
      if (echoed(event)) last[event] = { properties: properties as Properties, source, at: queued ? undefined : Date.now() }
    },
    /** The bridge's own event, queued for the tracker, reached it now: its window starts. */
    replayed(event: EventName, properties: unknown) {
      const before = last[event]
      if (before && before.properties === properties && before.at === undefined) before.at = Date.now()
    }
  }
}
