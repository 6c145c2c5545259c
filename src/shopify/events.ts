import type { Checkout, CheckoutLineItem, Context, ProductVariant } from '@shopify/web-pixels-extension'
import { feedbackError } from '../shared/error'
import type { EventProperties, FeedbackError, LineItem } from '../shared/types'
import type { CatalogIds } from './types'

/*
 * What Shopify's standard events become in SPEC's (README "Shopify", the mapping table). Each
 * function takes an event's data as Shopify's types describe it and returns SPEC's properties;
 * what cannot be mapped is reported by name (`report`) and left out, so a line without a
 * product never costs the order its purchase.
 */

type Report = (error: FeedbackError) => void

// Shopify's order id comes as a global id (gid://shopify/OrderIdentity/5512345678901, or
// …/Order/…); the number at its end is the order's id in the Admin API, in order webhooks and
// in Liquid's {{ order.id }}: the one id every way of tracking the order can agree on.
const numericId = (id: string) => id.replace(/^gid:\/\/shopify\/\w+\//, '')

// Shopify's product and variant ids are global ids too; the product feed carries the numbers.
const defaultIds = (variant: ProductVariant): CatalogIds => ({
  item_id: numericId(variant.product.id || ''),
  variant_item_id: numericId(variant.id || '')
})

/**
 * Checkout, thank-you and order status pages: where theme scripts, and so the storefront's
 * script tag, do not run. Shopify serves them under /checkouts/ (thank-you included) and
 * /orders/ (order status).
 */
export const isCheckoutPage = (pathname: string) => /\/(checkouts|orders)\//.test(pathname)

/** A page_viewed's view-page: the page as Shopify's context saw it. */
export const viewPageOf = (context: Context): EventProperties['view-page'] => ({
  url: context.document.location.href,
  ref: context.document.referrer,
  width: context.window.innerWidth,
  height: context.window.innerHeight
})

export function createMapping(itemIds: (variant: ProductVariant) => CatalogIds = defaultIds) {
  /** SPEC's line items of a checkout; a line that has none of the catalogue's ids is reported and left out. */
  const lineItemsOf = (shopifyEvent: string, lines: CheckoutLineItem[], report: Report): LineItem[] => {
    const items: LineItem[] = []
    lines.forEach((line, index) => {
      const field = 'checkout.lineItems[' + index + ']'
      const fault = (rule: string) => report(feedbackError(shopifyEvent, field, rule))
      // A line without a variant is no product of the catalogue: a tip, a custom line.
      if (!line.variant) return fault('has no variant, so no catalogue ids: left out')
      const ids = itemIds(line.variant)
      if (!ids || !ids.item_id || !ids.variant_item_id) return fault('has no item_id or variant_item_id from itemIds(): left out')
      // SPEC's unit_price is the sale price: what the shopper paid per unit, after the line's discounts.
      const paid = line.quantity > 0 ? line.finalLinePrice.amount / line.quantity : line.variant.price.amount
      items.push({ item_id: ids.item_id, variant_item_id: ids.variant_item_id, unit_price: Math.round(paid * 1e6) / 1e6, quantity: line.quantity })
    })
    return items
  }

  /** checkout_completed's purchase: the order's id, amounts and lines. */
  const purchaseOf = (checkout: Checkout, report: Report): EventProperties['purchase'] => {
    const orderId = checkout.order?.id
    if (!orderId) throw feedbackError('checkout_completed', 'checkout.order.id', 'is required: a purchase needs its order')
    const properties: EventProperties['purchase'] = {
      order_id: numericId(orderId),
      currency: (checkout.currencyCode || checkout.totalPrice?.currencyCode)!,
      revenue: checkout.totalPrice?.amount as number,
      line_items: lineItemsOf('checkout_completed', checkout.lineItems, report)
    }
    // Optional in SPEC: sent when Shopify has them.
    if (checkout.totalTax) properties.total_tax = checkout.totalTax.amount
    if (checkout.shippingLine) properties.total_shipping = checkout.shippingLine.price.amount
    if (checkout.discountsAmount) properties.total_discount = checkout.discountsAmount.amount
    return properties
  }

  return { lineItemsOf, purchaseOf }
}

/** Which lines a checkout holds, for telling whether they changed: variants and quantities. */
export const linesKey = (lines: CheckoutLineItem[]) => JSON.stringify(lines.map((line) => [line.variant?.id, line.quantity]))
