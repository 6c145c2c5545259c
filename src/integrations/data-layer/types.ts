// Public types of the GA4 data-layer bridge (`bridgeDataLayer`, docs/guide/ga4-data-layer.md).
import type { Tracker } from '../../browser/types'
import type { CatalogIds, FeedbackError } from '../../shared/types'

export type { CatalogIds }

/** An item of a GA4 e-commerce event, as Google documents it; every field may be missing or wrong on a real page. */
export interface Ga4Item {
  /** The item's id: a product's or a variation's, as the shop's GA4 setup sends it. */
  item_id?: string | number
  /** The item's name, as shown to the shopper. */
  item_name?: string
  /** A variant's name ("green"), not an id. */
  item_variant?: string
  /** The product a variation belongs to, when item_id is the variation's (GTM4WP sends it). */
  item_group_id?: string | number
  /** Price of one unit, after its discount. */
  price?: number | string
  /** Units of the item. */
  quantity?: number | string
  /** Discount of one unit. */
  discount?: number | string
  /** Any other parameter the page sends with the item, read by an `itemIds` of the shop's own. */
  [parameter: string]: unknown
}

/** The GA4 events the bridge maps; every other event is left alone. */
export const GA4_EVENTS = [
  'purchase',
  'select_item',
  'select_content',
  'view_item',
  'add_to_cart',
  'remove_from_cart',
  'view_cart',
  'begin_checkout',
  'add_shipping_info',
  'add_payment_info'
] as const

/** The GA4 e-commerce events the bridge reads: each becomes SPEC's (docs/guide/ga4-data-layer.md has the table). */
export type Ga4EventName = (typeof GA4_EVENTS)[number]

/** The options of `bridgeDataLayer()`. */
export interface DataLayerOptions {
  /** The data layer to read. Default `window.dataLayer`, created as `[]` if the page has none yet. */
  dataLayer?: unknown[]
  /** The GA4 events to map. Default all of them; leave out the ones your code already tracks itself. */
  events?: Ga4EventName[]
  /**
   * SPEC's ids of a GA4 item. Default: GA4's `item_id` as both `item_id` and `variant_item_id`,
   * or, for an item with `item_group_id`, that as `item_id` and GA4's `item_id` as the variant.
   * GA4 leaves open whether `item_id` is a product id or a SKU, and `item_variant` is a name.
   * @example (item) => ({ item_id: String(item.item_group_id ?? item.item_id), variant_item_id: String(item.item_id) })
   */
  itemIds?: (item: Ga4Item) => CatalogIds
  /**
   * Whether a purchase's GA4 `value` already counts tax and shipping. SPEC's `revenue` is the
   * order's total; Google's documentation has `value` without them, WooCommerce's plugins send
   * the total. Left out, each purchase tells: the sum of its lines plus whichever of `tax` and
   * `shipping` comes nearest to `value` is what `value` counts, and the rest is added. Set true
   * if your `value` is the total paid, false if it is Google's.
   */
  valueIncludesTaxAndShipping?: boolean
  /**
   * No longer needed: the bridge hears from the tracker which view-page it counted last, with
   * its own `autoViewPage` or without. Kept so that code that sets it still compiles.
   * @deprecated
   */
  autoViewPage?: boolean
  /** Hears each GA4 event or item that could not be mapped, named with its field; each is also shown in the console. */
  onError?: (error: FeedbackError) => void
}

/**
 * What the bridge sends through and listens to: the tracker, or anything with its `track` and
 * `use`. The bridge plugs itself in as an add-on (docs/guide/extending.md) to hear what
 * the shop tracks itself through the same tracker, what the tracker took, the view-page it
 * counted last and the consent.
 */
export type BridgeTarget = Pick<Tracker, 'track' | 'use'>
