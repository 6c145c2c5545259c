import { feedbackError } from '../../shared/error'
import { readFault } from './faults'
import { describe } from '../../shared/rules'
import type { EventProperties, FeedbackError, LineItem } from '../../shared/types'
import type { CatalogIds, DataLayerOptions, Ga4Item } from './types'

/*
 * What GA4's e-commerce events become in SPEC's (docs/guide/ga4-data-layer.md, the bridge's table).
 * Each function takes a GA4 event's parameters as the page pushed them and returns SPEC's
 * properties, or throws a FeedbackError naming the GA4 event and its field. An item that cannot
 * be mapped is reported on its own (`report`) and left out, so one bad item never costs an order
 * its purchase.
 */

type Report = (error: FeedbackError) => void
/** A GA4 event's parameters (gtag's third argument, or the push's `ecommerce`), as the page gave them. */
export type Ga4Parameters = Record<string, unknown>

// Sums of amounts in binary floating point (0.1 × 3) are rounded to a millionth: finer than any
// currency, and free of the noise that would make two equal orders differ.
const round = (amount: number) => Math.round(amount * 1e6) / 1e6

/**
 * The sum of an amount over the lines, rounded. A loop, not reduce(): Prototype.js 1.6 (still on
 * Magento 1 shops) replaces Array.prototype.reduce with a function that ignores its arguments.
 */
function sumOf<T>(lines: T[], amount: (line: T) => number) {
  let sum = 0
  for (const line of lines) sum += amount(line)
  return round(sum)
}

/**
 * A GA4 amount: a finite number, or text that reads as one ("29.90"), as templates often print
 * them; undefined for anything else. Text with a decimal comma ("1,90") is not read: it may as
 * well be a thousands separator.
 */
function readAmount(value: unknown): number | undefined {
  const amount = typeof value == 'string' && value.trim() != '' ? Number(value) : value
  return typeof amount == 'number' && Number.isFinite(amount) ? amount : undefined
}

const AMOUNT_RULE = 'must be a number (or text that reads as one, like "29.90"), got '

/** A GA4 amount, or a FeedbackError naming the event and the field. */
function amountOf(event: string, field: string, value: unknown): number {
  const amount = readAmount(value)
  if (amount === undefined) throw feedbackError(event, field, AMOUNT_RULE + describe(value))
  return amount
}

/** Whether the page left an optional amount out, or printed an empty template value for it. */
const leftOut = (value: unknown) => value == null || value === ''

/** An optional GA4 amount: undefined when left out. */
const optionalAmount = (event: string, field: string, value: unknown) => (leftOut(value) ? undefined : amountOf(event, field, value))

/** A GA4 id, which pages push as text or as a number. */
function idOf(event: string, field: string, value: unknown): string {
  if ((typeof value == 'string' && value != '') || (typeof value == 'number' && Number.isFinite(value))) return String(value)
  throw feedbackError(event, field, 'must be a non-empty string or a number, got ' + describe(value))
}

export function createGa4Mapping(options: DataLayerOptions) {
  /**
   * SPEC's ids of one GA4 item, or a FeedbackError naming the event and the item's field. By
   * default GA4's `item_id` is both: GA4 leaves open whether it is a product id or a SKU, and
   * the shop that knows says so with itemIds().
   */
  const idsOf = (event: string, field: string, item: unknown): CatalogIds => {
    if (!item || typeof item != 'object') throw feedbackError(event, field, 'must be an object, got ' + describe(item))
    if (!options.itemIds) {
      const id = idOf(event, field + '.item_id', (item as Ga4Item).item_id)
      // A variation's item names its product in item_group_id (GTM4WP's variable products).
      const group = (item as Ga4Item).item_group_id
      return { item_id: leftOut(group) ? id : idOf(event, field + '.item_group_id', group), variant_item_id: id }
    }
    let ids: CatalogIds | undefined
    try {
      ids = options.itemIds(item as Ga4Item)
    } catch (error) {
      throw readFault(event, field, error)
    }
    if (!ids || typeof ids.item_id != 'string' || !ids.item_id || typeof ids.variant_item_id != 'string' || !ids.variant_item_id)
      throw feedbackError(event, field, 'got no item_id and variant_item_id strings from itemIds()')
    return { item_id: ids.item_id, variant_item_id: ids.variant_item_id }
  }

  /** The items array of an event, which every event the bridge maps has; only a whole cart may be empty. */
  const itemsOf = (event: string, parameters: Ga4Parameters, mayBeEmpty = false): unknown[] => {
    const items = parameters.items
    if (!Array.isArray(items) || (items.length == 0 && !mayBeEmpty))
      throw feedbackError(event, 'items', 'must be a non-empty array, got ' + (Array.isArray(items) ? 'an empty one' : describe(items)))
    return items
  }

  /**
   * One GA4 item as SPEC's line item: `price` is the sale price of one unit, and GA4's quantity
   * defaults to 1. A removal needs no price: it only takes units away.
   */
  const lineItemOf = (event: string, field: string, item: unknown): LineItem & { discount?: number } => {
    const ids = idsOf(event, field, item)
    const { price, quantity, discount } = item as Ga4Item
    // GA4 counts an item without a quantity as one unit.
    const units = optionalAmount(event, field + '.quantity', quantity) ?? 1
    if (!Number.isInteger(units) || units <= 0) throw feedbackError(event, field + '.quantity', 'must be a positive integer, got ' + describe(units))
    const unitPrice = event == 'remove_from_cart' ? (optionalAmount(event, field + '.price', price) ?? 0) : amountOf(event, field + '.price', price)
    const line: LineItem & { discount?: number } = { ...ids, unit_price: unitPrice, quantity: units }
    const off = optionalAmount(event, field + '.discount', discount)
    if (off) line.discount = off
    return line
  }

  /**
   * Every item that can be a line item; each one that cannot is reported and left out.
   * `complete` says whether every item could be one.
   */
  const lineItemsOf = (event: string, parameters: Ga4Parameters, report: Report, mayBeEmpty?: boolean) => {
    const lines: (LineItem & { discount?: number })[] = []
    const items = itemsOf(event, parameters, mayBeEmpty)
    items.forEach((item, index) => {
      const field = 'items[' + index + ']'
      try {
        lines.push(lineItemOf(event, field, item))
      } catch (error) {
        report(readFault(event, field, error))
      }
    })
    return { lines, complete: lines.length == items.length }
  }

  /** Line items as SPEC has them: the discount, GA4's own field, is summed into the order's instead. */
  const withoutDiscount = (lines: (LineItem & { discount?: number })[]): LineItem[] =>
    lines.map(({ item_id, variant_item_id, unit_price, quantity }) => ({ item_id, variant_item_id, unit_price, quantity }))

  /**
   * What of tax and shipping a purchase's value leaves out. Google's value leaves both out, but
   * WooCommerce's plugins send the order's total (Google Analytics for WooCommerce always,
   * GTM4WP by default, and GTM4WP can leave out either one). Unless the shop said which it is,
   * the push tells: the value is the sum of its lines plus whichever of tax and shipping comes
   * nearest to it. Coupons are in the lines' prices already, so a value is off its sum only by
   * fees and rounding. Without all of its lines, Google's form is assumed.
   */
  const leftOutOfValue = (value: number, ofLines: number | undefined, tax: number, shipping: number) => {
    if (options.valueIncludesTaxAndShipping != null) return options.valueIncludesTaxAndShipping ? 0 : tax + shipping
    // Google's form first, so that it wins a tie.
    const candidates = [tax + shipping, shipping, tax, 0]
    if (ofLines == null) return candidates[0]
    const distance = (leftOut: number) => Math.abs(ofLines + tax + shipping - leftOut - value)
    let nearest = candidates[0]
    for (const leftOut of candidates) if (distance(leftOut) < distance(nearest)) nearest = leftOut
    return nearest
  }

  /** purchase → purchase: the order's id, its total, and its lines. */
  const purchaseOf = (parameters: Ga4Parameters, report: Report): EventProperties['purchase'] => {
    const event = 'purchase'
    const order_id = idOf(event, 'transaction_id', parameters.transaction_id)
    const currency = parameters.currency
    if (typeof currency != 'string' || !currency) throw feedbackError(event, 'currency', 'must be a currency code, got ' + describe(currency))
    // An amount of the order that the page printed wrong ("n/a", "1,90") is reported and left
    // out: the order is still sent, since an order lost costs the shop more than a total that
    // misses its tax.
    const orderAmount = (field: string, without: string) => {
      const given = parameters[field]
      if (leftOut(given)) return undefined
      const amount = readAmount(given)
      if (amount === undefined) report(feedbackError(event, field, AMOUNT_RULE + describe(given) + ': the order was sent ' + without))
      return amount
    }
    const tax = orderAmount('tax', 'without its tax')
    const shipping = orderAmount('shipping', 'without its shipping')
    const { lines, complete } = lineItemsOf(event, parameters, report)
    const value = orderAmount('value', 'with the sum of its lines as value')
    // Google has value with every purchase; a page that leaves it out gets the sum of its lines
    // (without tax and shipping, as Google's value is).
    const ofLines = sumOf(lines, (line) => line.unit_price * line.quantity)
    // SPEC's revenue is the order's total: what of tax and shipping the value leaves out is added.
    const revenue =
      value == null
        ? round(ofLines + (tax ?? 0) + (shipping ?? 0))
        : round(value + leftOutOfValue(value, complete ? ofLines : undefined, tax ?? 0, shipping ?? 0))
    const properties: EventProperties['purchase'] = { order_id, currency, revenue, line_items: withoutDiscount(lines) }
    if (tax != null) properties.total_tax = tax
    if (shipping != null) properties.total_shipping = shipping
    // GA4's discount is per unit; SPEC's total_discount is the order's.
    if (lines.some((line) => line.discount)) properties.total_discount = sumOf(lines, (line) => (line.discount || 0) * line.quantity)
    if (typeof parameters.affiliation == 'string' && parameters.affiliation) properties.affiliation = parameters.affiliation
    return properties
  }

  /** The ids of an event's first item: the one item GA4 expects in a select_item or a view_item. */
  const firstItemIds = (event: string, parameters: Ga4Parameters): CatalogIds => idsOf(event, 'items[0]', itemsOf(event, parameters)[0])

  /** select_item → click-item of its item. */
  const clickOf = (parameters: Ga4Parameters) => firstItemIds('select_item', parameters)

  /**
   * select_content of a product → click-item of it: Google Analytics for WooCommerce sends a
   * listing's product clicks so, with the product's id as content_id. Undefined for other content.
   */
  const contentClickOf = (parameters: Ga4Parameters): CatalogIds | undefined => {
    if (parameters.content_type != 'product') return undefined
    const id = idOf('select_content', 'content_id', parameters.content_id)
    return { item_id: id, variant_item_id: id }
  }

  /** view_item → the product of the page's view-page. */
  const productOf = (parameters: Ga4Parameters) => firstItemIds('view_item', parameters)

  /**
   * The lines of a cart event: the whole cart (view_cart, begin_checkout …), which may be
   * empty, or only what changed (add_to_cart, remove_from_cart). All of them or none: a cart
   * without a line it holds would tell the service that line was removed.
   */
  const cartLinesOf = (event: string, parameters: Ga4Parameters, report: Report, wholeCart: boolean): LineItem[] => {
    const { lines, complete } = lineItemsOf(event, parameters, report, wholeCart)
    if (!complete) throw feedbackError(event, 'items', 'hold an item that could not be mapped: no update-cart sent, since it would leave that item out')
    return withoutDiscount(lines)
  }

  return { purchaseOf, clickOf, contentClickOf, productOf, cartLinesOf }
}
