import { feedbackError } from '../shared/error'
import type { EventProperties, LineItem } from '../shared/types'
import { amountOf, idOf, listOf, optionalAmountOf, optionalIdOf, optionalTextOf, productLinesOf, quantityOf, textOf } from './order-fields'
import type { Fields } from './order-json'
import { orderShopper, type OrderPurchase } from './order-shopper'

/*
 * A WooCommerce order (the REST API's order, which an order webhook delivers as it is:
 * woocommerce-rest-api-docs, "Webhooks", "Delivery/payload") as SPEC's purchase, agreeing with
 * what the shop's thank-you page reports through the GA4 data layer: GTM4WP pushes the order's
 * number ($order->get_order_number(), `number` here) as transaction_id, Google Analytics for
 * WooCommerce its id ($order->get_id(), `id`). The two are the same number unless a plugin
 * renumbers orders; `orderId` says which the shop's pages use.
 */

/** Which of the order's ids is its order_id: `'number'` (GTM4WP, and what shoppers see) or `'id'` (Google Analytics for WooCommerce). */
export type WooCommerceOrderId = 'number' | 'id'

/** The order's lines of products (a fee or a deleted product has none, and is left out). */
function lineItemsOf(topic: string, order: Fields): LineItem[] {
  return productLinesOf(topic, order, (line, field, product) => {
    const quantity = quantityOf(topic, field + '.quantity', line.quantity)
    // `price` is the line's total over its quantity, after coupons and before tax, as the
    // data-layer plugins give an item's price; without it, that is worked out from `total`.
    const unitPrice = line.price != null ? amountOf(topic, field + '.price', line.price) : amountOf(topic, field + '.total', line.total) / quantity
    return {
      item_id: product,
      // variation_id is 0 for a simple product, whose variant is the product itself.
      variant_item_id: optionalIdOf(topic, field + '.variation_id', line.variation_id) || product,
      unit_price: unitPrice,
      quantity
    }
  })
}

/** The order's shopper: the storefront's ids from its meta data (the PHP snippet of the guide), the browser's address and agent. */
function shopperOf(topic: string, order: Fields, orderId: string, secret: string) {
  const attributes = new Map(listOf(topic, 'meta_data', order.meta_data).map((meta) => [typeof meta.key == 'string' ? meta.key : '', meta.value]))
  return orderShopper(
    {
      attributes,
      platform: 'woo',
      orderId,
      // 0 for a guest.
      customerId: optionalIdOf(topic, 'customer_id', order.customer_id),
      ip: optionalTextOf(order.customer_ip_address),
      ua: optionalTextOf(order.customer_user_agent)
    },
    secret
  )
}

/** The purchase of a WooCommerce order; throws a FeedbackError naming the field that keeps it from being one. */
export function wooCommercePurchase(topic: string, order: Fields, orderIdField: WooCommerceOrderId, secret: string): OrderPurchase {
  const orderId = idOf(topic, orderIdField, order[orderIdField])
  const revenue = optionalAmountOf(topic, 'total', order.total)
  if (revenue === undefined) throw feedbackError(topic, 'total', "is required: it is the purchase's revenue")
  const properties: EventProperties['purchase'] = {
    order_id: orderId,
    currency: textOf(topic, 'currency', order.currency),
    revenue,
    line_items: lineItemsOf(topic, order)
  }
  const tax = optionalAmountOf(topic, 'total_tax', order.total_tax)
  const shipping = optionalAmountOf(topic, 'shipping_total', order.shipping_total)
  const discount = optionalAmountOf(topic, 'discount_total', order.discount_total)
  if (tax !== undefined) properties.total_tax = tax
  if (shipping !== undefined) properties.total_shipping = shipping
  if (discount !== undefined) properties.total_discount = discount
  return { properties, shopper: shopperOf(topic, order, orderId, secret) }
}
