// Builders of the Shopify event payloads that the tests publish through the pixel host
// (demo/shopify/host.js). They are typed with @shopify/web-pixels-extension's own types, and
// types.test.ts runs the compiler over this file and demo/shopify/checkout.mjs, so a payload
// that drifts from Shopify's shapes fails a test.
import type {
  Context,
  Location,
  PixelEventsCheckoutCompletedData,
  PixelEventsCheckoutStartedData,
  PixelEventsPageViewedData,
  RegisterInit,
  Shop
} from '@shopify/web-pixels-extension'
import { checkoutOf, type Order, type OrderLine } from '../../demo/shopify/checkout.mjs'

export type { Order, OrderLine }

/** Returns an order with two lines, in EUR, with ids shaped as Shopify's; `changes` replace its fields. */
export function sampleOrder(changes: Partial<Order> = {}): Order {
  return {
    id: 'gid://shopify/OrderIdentity/5512345678901',
    token: 'c1a9b3e07f6d4c2a8e5b0d9f1a2b3c4d',
    currency: 'EUR',
    lines: [
      { productId: '7234567890123', variantId: '42123456789012', title: 'Linen shirt', variantTitle: 'M', sku: 'LS-M', price: 39.9, quantity: 2 },
      { productId: '7234567890456', variantId: '42123456789345', title: 'Canvas sneaker', variantTitle: '42', sku: 'CS-42', price: 59, quantity: 1 }
    ],
    shipping: 4.9,
    // 19 % VAT included in 143.70.
    tax: 22.94,
    ...changes
  }
}

/** The data of checkout_completed for `order`: the checkout with its order and its payment. */
export function checkoutCompleted(order: Order): PixelEventsCheckoutCompletedData {
  return { checkout: checkoutOf(order) }
}

/** The data of checkout_started for `order`: the same checkout before payment, so with no order and no transaction yet. */
export function checkoutStarted(order: Order): PixelEventsCheckoutStartedData {
  return { checkout: { ...checkoutOf(order), order: null, transactions: [] } }
}

/** The data of page_viewed, which Shopify sends empty: the page is in the event's context. */
export function pageViewed(): PixelEventsPageViewedData {
  return {}
}

const locationOf = (url: URL): Location => ({
  hash: url.hash,
  host: url.host,
  hostname: url.hostname,
  href: url.href,
  origin: url.origin,
  pathname: url.pathname,
  port: url.port,
  protocol: url.protocol,
  search: url.search
})

/**
 * Returns a Context for a page at `href`, as a desktop Chromium would give it, for code that runs
 * outside a page. In a browser the host fills an event's context from the real page instead.
 */
export function contextFor(href: string, title = 'Demo store'): Context {
  const location = locationOf(new URL(href))
  return {
    document: { characterSet: 'UTF-8', location, referrer: '', title },
    navigator: {
      cookieEnabled: true,
      language: 'en-US',
      languages: ['en-US', 'en'],
      userAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36'
    },
    window: {
      innerHeight: 800,
      innerWidth: 1280,
      location,
      origin: location.origin,
      outerHeight: 800,
      outerWidth: 1280,
      pageXOffset: 0,
      pageYOffset: 0,
      screen: { height: 800, width: 1280 },
      screenX: 0,
      screenY: 0,
      scrollX: 0,
      scrollY: 0
    }
  }
}

export const SHOP: Shop = {
  countryCode: 'DE',
  myshopifyDomain: 'demo-store.myshopify.com',
  name: 'Demo store',
  paymentSettings: { currencyCode: 'EUR' },
  storefrontUrl: 'https://demo-store.example'
}

/** Every consent purpose, allowed or not. */
export function consent(allowed: boolean): RegisterInit['customerPrivacy'] {
  return { analyticsProcessingAllowed: allowed, marketingAllowed: allowed, preferencesProcessingAllowed: allowed, saleOfDataAllowed: allowed }
}

/**
 * Returns the RegisterInit a pixel gets as api.init: the page's context at render, no customer or
 * cart unless given, the shop, and the visitor's consent at render (all allowed unless given).
 * The host replaces nothing in it; leave `context` out of what you pass to the host to get the
 * real page's instead.
 */
export function registerInit({
  context = contextFor('https://demo-store.example/checkouts/cn/c1a9b3e07f6d4c2a8e5b0d9f1a2b3c4d/thank-you'),
  customer = null,
  cart = null,
  customerPrivacy = consent(true)
}: Partial<Pick<RegisterInit, 'context' | 'customerPrivacy'> & RegisterInit['data']> = {}): RegisterInit {
  return { context, data: { customer, cart, shop: SHOP, purchasingCompany: null }, customerPrivacy }
}
