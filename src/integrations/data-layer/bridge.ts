import { attempt } from '../../shared/attempt'
import { feedbackError, reporter } from '../../shared/error'
import { describe } from '../../shared/rules'
import type { FeedbackError } from '../../shared/types'
import type { StopFollowing } from '../consent/types'
import { followDataLayer, pageDataLayer } from '../follow-data-layer'
import { followTabCart } from './cart'
import { readFault } from './faults'
import { createGa4Reader } from './ga4-events'
import { linkTracker } from './link'
import { GA4_EVENTS, type BridgeTarget, type DataLayerOptions } from './types'

// What is known of a data layer, kept on the array itself: a module's bridge and the script-tag
// add-on on one page are two copies of this code, and either would double the other's clicks
// and carts. A symbol is seen by neither GTM nor the page's loops.
const STATE = Symbol.for('discovery-feedback.dataLayer')
interface DataLayerState {
  /** A bridge reads it now. */
  bridged: boolean
  /** Entries before this index were read by a bridge that has stopped: a new one starts after them. */
  readUpTo: number
}

/**
 * Bridges the page's GA4 data layer to the tracker: `purchase`, `select_item`, `view_item` and
 * the cart events, pushed before this call and after it, in both forms, become SPEC's events
 * (docs/guide/ga4-data-layer.md has the table). The bridge plugs itself into the tracker as an add-on
 * (`tracker.use`). Call it right after createTracker(), in the same task, so that a view_item
 * already pushed names the product of the page's first view-page. Returns a function that stops
 * the bridge and removes its add-on. Never throws: what cannot be done is reported, in the
 * console and to `onError`, as the tracker reports.
 *
 * ```js
 * bridgeDataLayer(tracker)
 * ```
 * @param tracker - The tracker, or the script tag's command function (`discoveryFeedback`).
 * @param options - The data layer, the GA4 events to map, how to read an item's ids, and where faults go.
 */
export function bridgeDataLayer(tracker: BridgeTarget, options: DataLayerOptions = {}): StopFollowing {
  const report = reporter(options.onError)
  // Server rendering: there is no page to read.
  if (typeof window == 'undefined') return () => {}
  try {
    return followGa4Events(tracker, options, report)
  } catch (caught) {
    // A page that froze its data layer, or a push that cannot be replaced.
    report(readFault(undefined, 'dataLayer', caught))
    return () => {}
  }
}

/** The data layer to read and what is known of it, once what the bridge was given is checked; undefined, reported, when it cannot start. */
function checkStart(target: BridgeTarget, options: DataLayerOptions, report: (error: FeedbackError) => void) {
  const missing = (['track', 'use'] as const).find((method) => typeof attempt(() => target[method]) != 'function')
  if (missing) return report(feedbackError(undefined, 'tracker', 'must be a tracker, or an object with its ' + missing + '(), got ' + describe(target)))
  const dataLayer = pageDataLayer(options.dataLayer)
  if (!dataLayer)
    return report(
      feedbackError(undefined, 'dataLayer', 'must be an array, got ' + describe(options.dataLayer ?? (window as { dataLayer?: unknown }).dataLayer))
    )
  const state = ((dataLayer as unknown[] & Record<symbol, DataLayerState | undefined>)[STATE] ??= { bridged: false, readUpTo: 0 })
  if (state.bridged) return report(feedbackError(undefined, 'dataLayer', 'is bridged already: a second bridge would track every event twice'))
  for (const name of options.events || []) {
    if (!GA4_EVENTS.includes(name)) report(feedbackError(undefined, 'events', 'lists ' + name + ', which is none of ' + GA4_EVENTS.join(', ')))
  }
  return { dataLayer, state }
}

/** What bridgeDataLayer does once it knows there is a page: checks what it was given, links to the tracker, then reads the data layer. */
function followGa4Events(target: BridgeTarget, options: DataLayerOptions, report: (error: FeedbackError) => void): StopFollowing {
  const start = checkStart(target, options, report)
  if (!start) return () => {}
  const { dataLayer, state } = start
  const life = new AbortController()
  state.bridged = true
  try {
    const cart = followTabCart(life.signal)
    const reader = createGa4Reader(options, linkTracker(target, cart, report, life.signal), cart, report)
    // True while the entries pushed before the bridge started are read.
    let earlier = true
    const stopReading = followDataLayer(dataLayer, (entry) => reader.read(entry, earlier), state.readUpTo)
    earlier = false
    reader.earlierRead()
    return () => {
      if (life.signal.aborted) return
      life.abort()
      stopReading()
      state.bridged = false
      state.readUpTo = dataLayer.length
    }
  } catch (caught) {
    // Half started: nothing of it may stay behind, nor keep another bridge out.
    life.abort()
    state.bridged = false
    throw caught
  }
}
