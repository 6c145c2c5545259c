import { attempt } from '../../shared/attempt'
import { feedbackError, reporter } from '../../shared/error'
import { ridFor } from '../../shared/rids'
import { describe } from '../../shared/rules'
import type { EventName, EventProperties, FeedbackError } from '../../shared/types'
import type { StopFollowing } from '../consent/types'
import { followDataLayer, pageDataLayer } from '../follow-data-layer'
import { changedCart, followTabCart } from './cart'
import { createEchoes, watchTracker, type DirectListener } from './direct'
import { ga4EventOf, loadedAgain, parametersOf } from './entries'
import { readFault } from './faults'
import { createGa4Mapping, type Ga4Parameters } from './mapping'
import { GA4_EVENTS, type BridgeTarget, type DataLayerOptions, type Ga4EventName } from './types'
import { followViews, type Views } from './views'

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

/** What the bridge needs of the page around it, which the module and the script tag each know in their own way. */
export interface PageSide {
  /** The account of view-pages (views.ts). */
  views: Views
  /** Starts telling `listener` of what is tracked directly through the tracker: now, or the moment it exists. */
  onDirect(listener: DirectListener): void
  /** Whether what the bridge tracks now waits in the script tag's queue, the tracker not loaded yet. */
  queued?(): boolean
}

/** The URL a view-page was tracked for: the one it names, or the page's. */
const urlOf = (properties: unknown) => {
  const url = attempt(() => (properties as { url?: unknown }).url)
  return typeof url == 'string' ? url : location.href
}

/**
 * Starts the bridge: every GA4 e-commerce event in the data layer, those pushed before and each
 * one after, in both forms, tracked as SPEC's event through `target.track`. Never throws: what
 * cannot be done is reported, in the console and to `onError`, as the tracker reports.
 */
export function startBridge(target: BridgeTarget, options: DataLayerOptions, makePageSide: (signal: AbortSignal) => PageSide): StopFollowing {
  const report = reporter(options.onError)
  // Server rendering: there is no page to read.
  if (typeof window == 'undefined') return () => {}
  try {
    return followGa4Events(target, options, makePageSide, report)
  } catch (caught) {
    // A page that froze its data layer, or a push that cannot be replaced.
    report(readFault(undefined, 'dataLayer', caught))
    return () => {}
  }
}

/** What startBridge does once it knows there is a page: checks what it was given, then reads the data layer. */
function followGa4Events(
  target: BridgeTarget,
  options: DataLayerOptions,
  makePageSide: (signal: AbortSignal) => PageSide,
  report: (error: FeedbackError) => void
) {
  const nothing = () => {}
  if (typeof target?.track != 'function') {
    report(feedbackError(undefined, 'tracker', 'must be a tracker, or an object with its track(), got ' + describe(target)))
    return nothing
  }
  const dataLayer = pageDataLayer(options.dataLayer)
  if (!dataLayer) {
    report(feedbackError(undefined, 'dataLayer', 'must be an array, got ' + describe(options.dataLayer ?? (window as { dataLayer?: unknown }).dataLayer)))
    return nothing
  }
  const known = dataLayer as unknown as Record<symbol, DataLayerState | undefined>
  const state = (known[STATE] ??= { bridged: false, readUpTo: 0 })
  if (state.bridged) {
    report(feedbackError(undefined, 'dataLayer', 'is bridged already: a second bridge would track every event twice'))
    return nothing
  }
  for (const name of options.events || []) {
    if (!GA4_EVENTS.includes(name)) report(feedbackError(undefined, 'events', 'lists ' + name + ', which is none of ' + GA4_EVENTS.join(', ')))
  }
  const events = new Set<string>(options.events || GA4_EVENTS)
  const mapping = createGa4Mapping(options)
  const repeatedPage = loadedAgain()
  const life = new AbortController()
  state.bridged = true

  try {
    const page = makePageSide(life.signal)
    const cart = followTabCart(life.signal)
    const echoes = createEchoes()
    // The bridge's own events, heard again as they pass the tracker's wrapped methods, are no
    // call of the shop's: those on their way now, and those the script tag's queue replays
    // later, known by their properties object.
    let sending = false
    const own = new WeakSet<object>()
    const isShops = (properties: unknown) => !life.signal.aborted && !sending && !own.has(properties as object)
    page.onDirect({
      event(event, properties) {
        // The bridge's own event, replayed from the script tag's queue: its echo window starts now.
        if (own.has(properties as object)) echoes.replayed(event, properties)
        if (!isShops(properties)) return true
        // The first of two view-pages of one page wins, as the first of two clicks does.
        if (event == 'view-page' && page.views.repeatsBridge(urlOf(properties))) return false
        return !echoes.isEcho(event, properties, 'shop')
      },
      // Only what the tracker took counts: a click it refused (a tile without its variant id)
      // was never tracked, and must not keep the bridge's own from going.
      taken(event, properties) {
        if (!isShops(properties)) return
        if (event == 'view-page') page.views.viewed(urlOf(properties), 'shop')
        echoes.record(event, properties, 'shop')
      },
      consent(consent) {
        if (consent == 'denied') cart.forgetStored()
      }
    })
    const send = <E extends EventName>(event: E, properties: EventProperties[E]) => {
      // Stopped while this entry was read (by an onError that stops the bridge): nothing more goes.
      if (life.signal.aborted || echoes.isEcho(event, properties, 'bridge')) return
      echoes.record(event, properties, 'bridge', page.queued?.())
      own.add(properties)
      sending = true
      try {
        target.track(event, properties)
      } finally {
        sending = false
      }
    }

    // True while the entries pushed before the bridge started are read.
    let starting = true
    // Of those, only the last view_item counts: an SPA's earlier routes pushed the others.
    let earlierView: Ga4Parameters | undefined

    /** One GA4 event tracked as SPEC's; what cannot be is thrown as a FeedbackError naming the GA4 event and field. */
    const trackGa4Event = (name: Ga4EventName, parameters: Ga4Parameters) => {
      // What the page's HTML pushed on its first load, pushed again by a reload: the cart
      // already has it, and the shopper did not click again.
      const repeated = repeatedPage && (starting || document.readyState == 'loading')
      switch (name) {
        case 'purchase':
          // The order took the cart, whatever becomes of its event: the next add starts a new one.
          cart.remember([])
          // A purchase pushed again is the same order, with the same event id: stored once.
          return send('purchase', mapping.purchaseOf(parameters, report))
        case 'select_item':
        case 'select_content': {
          if (repeated) return
          const ids = name == 'select_item' ? mapping.clickOf(parameters) : mapping.contentClickOf(parameters)
          // Content that is no product (an article, a video) is no click-item.
          if (!ids) return
          // The rid of the discovery response that showed this item in this tab (SPEC "Links to
          // operations"), as the discovery client remembered it, by either id (a response may list
          // products or variants); none for an item no response showed.
          const rid = ridFor('item_id', ids.item_id) ?? ridFor('item_id', ids.variant_item_id)
          return send('click-item', rid ? { rid, ...ids } : ids)
        }
        case 'view_item': {
          if (starting) {
            earlierView = parameters
            return
          }
          const product = mapping.productOf(parameters)
          const url = location.href
          // The bridge named this page's product already: a later view_item is a variation the
          // shopper chose on it (WooCommerce's found_variation), and the page still counts once.
          if (page.views.repeatsBridge(url)) return
          if (!page.views.firstView(url))
            throw feedbackError(
              name,
              undefined,
              'came after this page\'s view-page was tracked: not sent again, so that the page counts once (README "GA4 data layer")'
            )
          page.views.viewed(url, 'bridge')
          return send('view-page', { url, ...product })
        }
        case 'add_to_cart':
        case 'remove_from_cart': {
          if (repeated) return
          // Google Analytics for WooCommerce's cart page, after a removal by link, pushes a
          // remove_from_cart without items: nothing that changed is named, and the cart is kept.
          const items = parameters.items
          if (Array.isArray(items) && items.length == 0) return
          const seen = cart.known()
          if (!seen)
            throw feedbackError(
              name,
              'items',
              'holds only the lines that changed, and this tab has not seen the whole cart yet (view_cart, begin_checkout): no update-cart sent'
            )
          const next = changedCart(
            seen,
            whole(() => mapping.cartLinesOf(name, parameters, report, false)),
            name == 'add_to_cart' ? 1 : -1
          )
          cart.remember(next)
          return send('update-cart', { line_items: next })
        }
        default: {
          // view_cart, begin_checkout, add_shipping_info, add_payment_info: the whole cart.
          const lines = whole(() => mapping.cartLinesOf(name, parameters, report, true))
          cart.remember(lines)
          return send('update-cart', { line_items: lines })
        }
      }
    }

    /** A cart's lines, or, when they cannot all be mapped, a cart no longer known: the one kept is no longer the shopper's. */
    const whole = <T>(lines: () => T): T => {
      try {
        return lines()
      } catch (error) {
        cart.remember(undefined)
        throw error
      }
    }

    /** One data-layer entry: a GA4 event we map, or nothing to us. A malformed one is reported, and the entries after it still go. */
    const read = (entry: unknown) => {
      let name: string | undefined
      try {
        const ga4 = ga4EventOf(entry)
        if (!ga4) return
        name = ga4.name
        // A purchase left to the shop's own code still empties the cart.
        if (name == 'purchase' && !events.has(name)) cart.remember([])
        if (events.has(name)) trackGa4Event(name as Ga4EventName, parametersOf(ga4))
      } catch (caught) {
        report(readFault(name, undefined, caught))
      }
    }

    const stopReading = followDataLayer(dataLayer, read, state.readUpTo)
    starting = false
    if (earlierView) read({ event: 'view_item', ecommerce: earlierView })

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

/**
 * Bridges the page's GA4 data layer to the tracker: `purchase`, `select_item`, `view_item` and
 * the cart events, pushed before this call and after it, in both forms, become SPEC's events
 * (README "GA4 data layer" has the table). Call it right after createTracker(), in the same
 * task, so that a view_item already pushed names the product of the page's first view-page.
 * Returns a function that stops the bridge.
 *
 * ```js
 * bridgeDataLayer(tracker)
 * ```
 */
export function bridgeDataLayer(tracker: BridgeTarget, options: DataLayerOptions = {}): StopFollowing {
  return startBridge(tracker, options, (signal) => ({
    views: followViews({ automatic: options.autoViewPage !== false, viewedAlready: false }, signal),
    onDirect: (listener) => watchTracker(tracker, listener)
  }))
}
