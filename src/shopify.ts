/**
 * The Shopify pixel: `connectShopify()` maps the Standard API's customer events onto SPEC's, for
 * an app pixel or a custom pixel, with the storefront's shopper ids and the shopper's consent.
 *
 * @packageDocumentation
 */
export { connectShopify } from './shopify/connect'
export type { CatalogIds, PixelApi, ShopifyConnection, ShopifyOptions, ShopifyStats } from './shopify/types'
export type { EventName, EventProperties, FeedbackError, LineItem, User } from './shared/types'
