/**
 * The server sender, for Node 20 or later: events a shop's backend knows of (a purchase from an
 * order webhook), sent with the browser tracker's rules, batching and retries, and the identity
 * cookie a shop's server renews past Safari's 7-day cap.
 *
 * @packageDocumentation
 */
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
