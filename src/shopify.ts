export { connectShopify } from './shopify/connect'
export type { CatalogIds, PixelApi, ShopifyConnection, ShopifyOptions, ShopifyStats } from './shopify/types'
export type { EventName, EventProperties, FeedbackError, LineItem, User } from './shared/types'
