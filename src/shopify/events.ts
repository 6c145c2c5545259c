import type { Checkout, CheckoutLineItem, Context, ProductVariant } from '@shopify/web-pixels-extension'
import { feedbackError } from '../shared/error'
import type { EventProperties, FeedbackError, LineItem } from '../shared/types'
import type { CatalogIds } from './types'

/*
 * What Shopify's standard events become in SPEC's (docs/guide/shopify.md, the mapping table). Each
 * function takes an event's data as Shopify's types describe it and returns SPEC's properties;
 * a line that cannot be mapped is reported by name (`report`) and left out, so a line without a
 * product never costs the order its purchase.
 */

type Report = (error: FeedbackError) => void

// Shopify's order id comes as a global id (gid://shopify/OrderIdentity/5512345678901, or
// …/Order/…) or as the bare number; the number is the order's id in the Admin API, in order
// webhooks and in Liquid's {{ order.id }}: the one id every way of tracking the order can agree on.
const numericId = (id: string) => id.replace(/^gid:\/\/shopify\/\w+\//, '')

// Shopify's product and variant ids, as numbers: what the product feed carries.
const defaultIds = (variant: ProductVariant): CatalogIds => ({
  item_id: numericId(variant.product.id || ''),
  variant_item_id: numericId(variant.id || '')
})

/**
 * Checkout, thank-you and order status pages: where theme scripts, and so the storefront's
 * script tag, do not run. Shopify serves them at /checkouts/… (thank-you included), and at
 * /<shop id>/checkouts/… and /<shop id>/orders/… (order status); a theme's /account/orders/…
 * is a storefront page.
 */
export const isCheckoutPage = (pathname: string) => /^\/(\d+\/)?(checkouts|orders)\//.test(pathname)

/** A page_viewed's view-page: the page as Shopify's context saw it, after the page viewed before it (`ref`). */
export const viewPageOf = (context: Context, ref: string): EventProperties['view-page'] => ({
  url: context.document.location.href,
  ref,
  width: context.window.innerWidth,
  height: context.window.innerHeight
})

export function createMapping(itemIds: (variant: ProductVariant) => CatalogIds = defaultIds) {
  /** One checkout line as SPEC's line item, or why it cannot be one. */
  const lineItemOf = (line: CheckoutLineItem): LineItem | string => {
    // A line without a variant is no product of the catalogue: a tip, a custom item.
    if (!line.variant) return 'has no variant, so no catalogue ids: left out'
    const ids = itemIds(line.variant)
    if (!ids?.item_id || !ids.variant_item_id) return 'got no item_id or variant_item_id from itemIds(): left out'
    // The variant's price: discounts, of the line or of the order, are all in total_discount
    // (Shopify's discountsAmount), so none is counted twice.
    return { item_id: ids.item_id, variant_item_id: ids.variant_item_id, unit_price: line.variant.price.amount, quantity: line.quantity }
  }

  /** SPEC's line items of a checkout; a line that cannot be one is reported and left out. */
  const lineItemsOf = (shopifyEvent: string, lines: CheckoutLineItem[], report: Report): LineItem[] => {
    const items: LineItem[] = []
    lines.forEach((line, index) => {
      const field = 'checkout.lineItems[' + index + ']'
      try {
        const item = lineItemOf(line)
        if (typeof item == 'string') report(feedbackError(shopifyEvent, field, item))
        else items.push(item)
      } catch (error) {
        // itemIds() threw, or the line lacks what Shopify's types promise.
        report(feedbackError(shopifyEvent, field, 'could not be mapped: ' + error))
      }
    })
    return items
  }

  /** checkout_completed's purchase: the order's id, amounts and lines. */
  const purchaseOf = (checkout: Checkout, report: Report): EventProperties['purchase'] => {
    const orderId = checkout.order?.id
    if (!orderId) throw feedbackError('checkout_completed', 'checkout.order.id', 'is required: a purchase needs its order')
    const properties: EventProperties['purchase'] = {
      order_id: numericId(orderId),
      // The currency the shopper paid in (Shopify's presentment currency), as every amount here is.
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
