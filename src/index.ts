/**
 * The storefront tracker as an ES module: `createTracker()` for a shop's own bundle (the script
 * tag is the same tracker, built into `dist/discovery-feedback.min.js`), tracking without code
 * (`trackDeclarative()`), the consent banners' adapters, the GA4 data-layer bridge, SPEC's rules,
 * and the discovery client.
 *
 * @packageDocumentation
 */
export { createTracker } from './browser/tracker'
export { EVENTS, validate } from './shared/rules'
export { trackDeclarative } from './browser/declarative'
export type { Addon, CommandFunction, Commands, Consent, Stats, Tracker, TrackerOptions } from './browser/types'
export type { Envelope, EventName, EventProperties, FeedbackError, LineItem, Outcome, User } from './shared/types'
export { googleConsentMode } from './integrations/consent/google-consent-mode'
export { tcfConsent } from './integrations/consent/tcf'
export { oneTrustConsent } from './integrations/consent/onetrust'
export { cookiebotConsent } from './integrations/consent/cookiebot'
export { shopifyConsent } from './integrations/consent/shopify-privacy'
export type { GoogleConsentModeOptions } from './integrations/consent/google-consent-mode'
export type { TcfOptions } from './integrations/consent/tcf'
export type { OneTrustOptions } from './integrations/consent/onetrust'
export type { CookiebotOptions } from './integrations/consent/cookiebot'
export type { ShopifyConsentOptions } from './integrations/consent/shopify-privacy'
export type { ConsentTarget, StopFollowing } from './integrations/consent/types'
export { bridgeDataLayer } from './integrations/data-layer/bridge'
export { shopifyCartIds } from './integrations/shopify-cart'
export type { CartTarget, ShopifyCartOptions } from './integrations/shopify-cart'
export type { BridgeTarget, CatalogIds, DataLayerOptions, Ga4EventName, Ga4Item } from './integrations/data-layer/types'
