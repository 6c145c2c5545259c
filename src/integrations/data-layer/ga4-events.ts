import { feedbackError } from '../../shared/error'
import { ridFor } from '../../shared/rids'
import type { FeedbackError } from '../../shared/types'
import { changedCart, type TabCart } from './cart'
import { ga4EventOf, loadedAgain, parametersOf } from './entries'
import { readFault } from './faults'
import type { TrackerLink } from './link'
import { createGa4Mapping, type Ga4Parameters } from './mapping'
import { GA4_EVENTS, type DataLayerOptions, type Ga4EventName } from './types'
import { lateView } from './views'

/** Reads data-layer entries; `earlier`: pushed before the bridge started. */
export interface Ga4Reader {
  read(entry: unknown, earlier: boolean): void
  /** The entries pushed before the bridge started are read: the last view_item among them now counts. */
  earlierRead(): void
}

/**
 * Each GA4 event the bridge maps, sent as SPEC's through the link to the tracker (docs/guide/ga4-data-layer.md
 * has the table). What cannot be sent is reported as a FeedbackError naming the GA4
 * event and field, and the entries after it still go.
 */
export function createGa4Reader(options: DataLayerOptions, link: TrackerLink, cart: TabCart, report: (error: FeedbackError) => void): Ga4Reader {
  const events = new Set<string>(options.events || GA4_EVENTS)
  const mapping = createGa4Mapping(options)
  const reloaded = loadedAgain()
  // Of the view_items pushed before the bridge started, the last: an SPA's earlier routes pushed the others.
  let earlierView: Ga4Parameters | undefined

  /** A cart's lines, or, when they cannot all be mapped, a cart no longer known: the one kept is no longer the shopper's. */
  const whole = <T>(lines: () => T): T => {
    try {
      return lines()
    } catch (error) {
      cart.remember(undefined)
      throw error
    }
  }

  const purchase = (parameters: Ga4Parameters) => {
    // The order took the cart, whatever becomes of its event: the next add starts a new one.
    cart.remember([])
    // A purchase pushed again is the same order, with the same event id: stored once.
    link.send('purchase', mapping.purchaseOf(parameters, report))
  }

  const click = (name: 'select_item' | 'select_content', parameters: Ga4Parameters) => {
    const ids = name == 'select_item' ? mapping.clickOf(parameters) : mapping.contentClickOf(parameters)
    // Content that is no product (an article, a video) is no click-item.
    if (!ids) return
    // The rid of the discovery response that showed this item in this tab (SPEC "Links to
    // operations"), as the discovery client remembered it, by either id (a response may list
    // products or variants); none for an item no response showed.
    const rid = ridFor('item_id', ids.item_id) ?? ridFor('item_id', ids.variant_item_id)
    link.send('click-item', rid ? { rid, ...ids } : ids)
  }

  const view = (parameters: Ga4Parameters) => {
    const product = mapping.productOf(parameters)
    const url = location.href
    // The bridge named this page's product already: a later view_item is a variation the
    // shopper chose on it (WooCommerce's found_variation), and the page still counts once.
    if (link.views.repeatsBridge(url)) return
    if (!link.views.firstView(url)) throw lateView()
    link.send('view-page', { url, ...product })
  }

  const cartChange = (name: 'add_to_cart' | 'remove_from_cart', parameters: Ga4Parameters) => {
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
    link.send('update-cart', { line_items: next })
  }

  /** view_cart, begin_checkout, add_shipping_info, add_payment_info: the whole cart. */
  const wholeCart = (name: Ga4EventName, parameters: Ga4Parameters) => {
    const lines = whole(() => mapping.cartLinesOf(name, parameters, report, true))
    cart.remember(lines)
    link.send('update-cart', { line_items: lines })
  }

  const track = (name: Ga4EventName, parameters: Ga4Parameters, earlier: boolean) => {
    // What the page's HTML pushed on its first load, pushed again by a reload: the cart
    // already has it, and the shopper did not click again.
    const repeated = reloaded && (earlier || document.readyState == 'loading')
    switch (name) {
      case 'purchase':
        return purchase(parameters)
      case 'select_item':
      case 'select_content':
        return repeated ? undefined : click(name, parameters)
      case 'view_item':
        if (!earlier) return view(parameters)
        earlierView = parameters
        return
      case 'add_to_cart':
      case 'remove_from_cart':
        return repeated ? undefined : cartChange(name, parameters)
      default:
        return wholeCart(name, parameters)
    }
  }

  /** One data-layer entry: a GA4 event we map, or nothing to us. A malformed one is reported, and the entries after it still go. */
  const read = (entry: unknown, earlier: boolean) => {
    let name: string | undefined
    try {
      const ga4 = ga4EventOf(entry)
      if (!ga4) return
      name = ga4.name
      // A purchase left to the shop's own code still empties the cart.
      if (name == 'purchase' && !events.has(name)) cart.remember([])
      if (events.has(name)) track(name as Ga4EventName, parametersOf(ga4), earlier)
    } catch (caught) {
      report(readFault(name, undefined, caught))
    }
  }

  return {
    read,
    earlierRead() {
      if (earlierView) read({ event: 'view_item', ecommerce: earlierView }, false)
    }
  }
}
