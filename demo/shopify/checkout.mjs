// This module builds a Shopify checkout object, the `checkout` that checkout_started and
// checkout_completed carry, from an order. The demo's thank-you page and the tests
// (test/shopify/events.ts) build theirs here. The JSDoc types are the package's own
// (@shopify/web-pixels-extension), and test/shopify/types.test.ts type-checks this file against
// them.

/** @typedef {import('@shopify/web-pixels-extension').Checkout} Checkout */
/** @typedef {import('@shopify/web-pixels-extension').CheckoutLineItem} CheckoutLineItem */
/** @typedef {import('@shopify/web-pixels-extension').MoneyV2} MoneyV2 */

/**
 * One line of an order, as the shop's catalog knows it.
 * @typedef {object} OrderLine
 * @property {string} productId The product's id, for example '7234567890123'.
 * @property {string} variantId The variant's id, for example '42123456789012'.
 * @property {string} title The product's title.
 * @property {string} [variantTitle] The variant's title, for example 'M' or '42'.
 * @property {string} [sku]
 * @property {string} [vendor]
 * @property {number} price The price of one item, tax included.
 * @property {number} quantity
 */

/**
 * An order: what the shopper bought, in one currency, prices tax included as in the EU.
 * @typedef {object} Order
 * @property {string} id The order's id as Shopify gives it to pixels: 'gid://shopify/OrderIdentity/5512345678901'.
 * @property {string} token The checkout's token, also in the thank-you page's URL.
 * @property {string} currency An ISO 4217 code, for example 'EUR'.
 * @property {OrderLine[]} lines
 * @property {number} shipping
 * @property {number} tax The tax included in the total.
 * @property {number} [discount] An order-level discount (a code), taken off the total.
 * @property {string} [email]
 * @property {boolean} [firstOrder]
 */

const cents = (/** @type {number} */ amount) => Math.round(amount * 100) / 100

/**
 * Returns the checkout of `order` as Shopify's events carry it. Money is `{ amount, currencyCode }`
 * with the amount a number. A line's finalLinePrice is its price times its quantity: Shopify
 * subtracts only line-level discounts there, and an order's discount code is in
 * discountApplications and discountsAmount.
 * @param {Order} order
 * @returns {Checkout}
 */
export function checkoutOf(order) {
  /** @type {(amount: number) => MoneyV2} */
  const money = (amount) => ({ amount: cents(amount), currencyCode: order.currency })
  const discount = order.discount ?? 0
  const subtotal = order.lines.reduce((sum, line) => sum + line.price * line.quantity, 0)
  const total = subtotal + order.shipping - discount
  /** @type {CheckoutLineItem[]} */
  const lineItems = order.lines.map((line, index) => ({
    discountAllocations: [],
    finalLinePrice: money(line.price * line.quantity),
    id: String(index + 1),
    properties: [],
    quantity: line.quantity,
    sellingPlanAllocation: null,
    title: line.title,
    variant: {
      id: line.variantId,
      image: { src: 'https://cdn.shopify.com/s/files/1/0000/0001/products/' + line.productId + '.jpg' },
      price: money(line.price),
      product: {
        id: line.productId,
        title: line.title,
        type: null,
        untranslatedTitle: line.title,
        url: '/products/' + line.productId,
        vendor: line.vendor ?? 'Demo store'
      },
      sku: line.sku ?? null,
      title: line.variantTitle ?? null,
      untranslatedTitle: line.variantTitle ?? null
    }
  }))
  const address = {
    address1: 'Hauptstraße 1',
    address2: null,
    city: 'Berlin',
    country: 'Germany',
    countryCode: 'DE',
    firstName: 'Erika',
    lastName: 'Mustermann',
    phone: null,
    province: null,
    provinceCode: null,
    zip: '10115'
  }
  return {
    attributes: [],
    billingAddress: address,
    buyerAcceptsEmailMarketing: false,
    buyerAcceptsSmsMarketing: false,
    currencyCode: order.currency,
    delivery: {
      selectedDeliveryOptions: [
        { cost: money(order.shipping), costAfterDiscounts: money(order.shipping), description: null, handle: 'standard', title: 'Standard', type: 'shipping' }
      ]
    },
    discountApplications: discount
      ? [
          {
            allocationMethod: 'ACROSS',
            targetSelection: 'ALL',
            targetType: 'LINE_ITEM',
            title: 'WELCOME',
            type: 'DISCOUNT_CODE',
            value: money(discount)
          }
        ]
      : [],
    discountsAmount: money(discount),
    email: order.email ?? 'erika@example.com',
    lineItems,
    localization: { country: { isoCode: 'DE' }, language: { isoCode: 'en' }, market: { handle: 'de', id: 'gid://shopify/Market/1234567' } },
    order: { customer: { id: null, isFirstOrder: order.firstOrder ?? true }, id: order.id },
    phone: null,
    shippingAddress: address,
    shippingLine: { price: money(order.shipping) },
    smsMarketingPhone: null,
    subtotalPrice: money(subtotal),
    token: order.token,
    totalPrice: money(total),
    totalTax: money(order.tax),
    transactions: [{ amount: money(total), gateway: 'shopify_payments', paymentMethod: { name: 'visa', type: 'creditCard' } }]
  }
}
