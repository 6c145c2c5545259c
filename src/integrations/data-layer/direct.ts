import { attempt } from '../../shared/attempt'
import { encode } from '../../shared/json'
import type { Consent, Tracker } from '../../browser/types'
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

/** What the bridge hears of the shop's own calls. */
export interface DirectListener {
  /** An event about to be tracked directly; false drops it. */
  event(event: EventName, properties: unknown): boolean
  /** The tracker took that event: it did not refuse it as invalid. */
  taken(event: EventName, properties: unknown): void
  /** The consent the shop (or a banner's adapter) set. */
  consent(state: Consent): void
}

/**
 * Lets the bridge hear what is tracked through the tracker's own methods (`track` also carries
 * the script tag's commands): each event, which the listener may drop, whether the tracker took
 * it, and each consent. The methods are wrapped, as the discovery client wraps them to fill in
 * rids; the wrappers stay when the bridge stops, and then only pass on. Nothing the listener
 * throws reaches the caller.
 */
export function watchTracker(tracker: Partial<Tracker>, listener: DirectListener) {
  // The tracker's count of calls it refused: an event it refused was never tracked (an invalid
  // one, or any call of a tracker whose options are broken).
  const refused = () => attempt(() => tracker.stats!().dropped.invalid)
  const call = (event: EventName, properties: unknown, original: () => void) => {
    if (!(attempt(() => listener.event(event, properties)) ?? true)) return
    const refusedBefore = refused()
    original()
    if (refused() === refusedBefore) attempt(() => listener.taken(event, properties))
  }
  const helpers = { clickItem: 'click-item', updateCart: 'update-cart', viewPage: 'view-page' } as const
  for (const method of Object.keys(helpers) as (keyof typeof helpers)[]) {
    const original = tracker[method] as ((properties: unknown) => void) | undefined
    if (typeof original == 'function')
      (tracker[method] as (properties: unknown) => void) = function (this: unknown, properties) {
        call(helpers[method], properties, () => original.call(this, properties))
      }
  }
  const { track, consent } = tracker
  if (typeof track == 'function')
    tracker.track = function (this: unknown, event, properties) {
      call(event, properties, () => track.call(this, event, properties))
    }
  if (typeof consent == 'function')
    tracker.consent = function (this: unknown, state) {
      consent.call(this, state)
      attempt(() => listener.consent(state))
    }
}
