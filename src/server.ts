export { createServerTracker } from './server/sender'
export { identityCookie } from './server/identity-cookie'
export { shopifyOrderWebhook } from './server/shopify-order-webhook'
export { wooCommerceOrderWebhook } from './server/woocommerce-order-webhook'
export type { IdentityCookieOptions } from './server/identity-cookie'
export type {
  OrderWebhook,
  ServerStats,
  ServerTracker,
  ServerTrackerOptions,
  ServerUser,
  ShopifyOrderWebhookOptions,
  WaitOptions,
  WooCommerceOrderWebhookOptions
} from './server/types'
export type { EventName, EventProperties, FeedbackError, LineItem, User } from './shared/types'
