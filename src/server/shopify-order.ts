import { feedbackError } from '../shared/error'
import type { EventProperties, LineItem } from '../shared/types'
import { amountOf, idOf, listOf, objectOf, optionalAmountOf, optionalIdOf, optionalTextOf, productLinesOf, quantityOf, textOf } from './order-fields'
import type { Fields } from './order-json'
import { orderShopper, type OrderPurchase } from './order-shopper'

/*
 * A Shopify order (the Admin API's Order resource, as orders/create and orders/paid deliver it)
 * as SPEC's purchase, agreeing with what the Shopify pixel sends for the same order
 * (src/shopify/events.ts): the order's numeric id, the amounts in the currency the shopper paid
 * in (the presentment money of each `*_set`, as the pixel's checkout reports them), each line's
 * price before discounts, the discounts in total_discount.
 */

/** The presentment amount of a money field (`<field>_set`), else the shop-currency field itself. */
function moneyOf(topic: string, order: Fields, field: string): number | undefined {
  const presentment = objectOf(topic, field + '_set.presentment_money', objectOf(topic, field + '_set', order[field + '_set'])?.presentment_money)
  if (presentment?.amount != null) return amountOf(topic, field + '_set.presentment_money.amount', presentment.amount)
  return optionalAmountOf(topic, field, order[field])
}

/** The order's id: `id`, or the number at the end of `admin_graphql_api_id` (gid://shopify/Order/…). */
function orderIdOf(topic: string, order: Fields): string {
  if (order.id == null && typeof order.admin_graphql_api_id == 'string') {
    const digits = /\/(\d+)$/.exec(order.admin_graphql_api_id)
    if (digits) return digits[1]
  }
  return idOf(topic, 'id', order.id)
}

/** The order's lines of products (a tip, a custom item or a protection plan has no product, and is left out). */
function lineItemsOf(topic: string, order: Fields): LineItem[] {
  return productLinesOf(topic, order, (line, field, product) => {
    const price = objectOf(topic, field + '.price_set', line.price_set)?.presentment_money as Fields | undefined
    return {
      item_id: product,
      // A line whose variant is gone (or Shopify's example order) names its product only.
      variant_item_id: optionalIdOf(topic, field + '.variant_id', line.variant_id) || product,
      unit_price:
        price?.amount != null ? amountOf(topic, field + '.price_set.presentment_money.amount', price.amount) : amountOf(topic, field + '.price', line.price),
      quantity: quantityOf(topic, field + '.quantity', line.quantity)
    }
  })
}

/** The order's shopper: the storefront's ids from note_attributes, the browser's address and agent. */
function shopperOf(topic: string, order: Fields, orderId: string, secret: string) {
  const attributes = new Map(
    listOf(topic, 'note_attributes', order.note_attributes).map((attribute) => [typeof attribute.name == 'string' ? attribute.name : '', attribute.value])
  )
  const customer = objectOf(topic, 'customer', order.customer)
  const client = objectOf(topic, 'client_details', order.client_details)
  return orderShopper(
    {
      attributes,
      platform: 'shopify',
      orderId,
      customerId: optionalIdOf(topic, 'customer.id', customer?.id),
      ip: optionalTextOf(order.browser_ip),
      ua: optionalTextOf(client?.user_agent)
    },
    secret
  )
}

/** The purchase of a Shopify order; throws a FeedbackError naming the field that keeps it from being one. */
export function shopifyPurchase(topic: string, order: Fields, secret: string): OrderPurchase {
  const orderId = orderIdOf(topic, order)
  const currency = textOf(topic, order.presentment_currency != null ? 'presentment_currency' : 'currency', order.presentment_currency ?? order.currency)
  const revenue = moneyOf(topic, order, 'total_price')
  if (revenue === undefined) throw feedbackError(topic, 'total_price', "is required: it is the purchase's revenue")
  const properties: EventProperties['purchase'] = { order_id: orderId, currency, revenue, line_items: lineItemsOf(topic, order) }
  const tax = moneyOf(topic, order, 'total_tax')
  const shipping = moneyOf(topic, order, 'total_shipping_price')
  const discount = moneyOf(topic, order, 'total_discounts')
  if (tax !== undefined) properties.total_tax = tax
  if (shipping !== undefined) properties.total_shipping = shipping
  if (discount !== undefined) properties.total_discount = discount
  return { properties, shopper: shopperOf(topic, order, orderId, secret) }
}
