import { optedOut } from '../shared/privacy-signals'
import type { Consent } from '../browser/types'
import type { PixelApi, ShopifyOptions } from './types'

/**
 * The consent a pixel starts with, as on the storefront: the browser's opt-out (Global Privacy
 * Control, Do-Not-Track when asked) denies; otherwise Shopify's customer privacy decides.
 * Analytics not (yet) allowed is 'pending', not 'denied': the visitor may still say yes on this
 * page, and a 'visitorConsentCollected' settles it. An API without customer privacy (a pixel
 * Shopify only loads once it may) counts as allowed.
 */
export function initialConsent(api: PixelApi, options: ShopifyOptions): Consent {
  if (optedOut(options)) return 'denied'
  return (api.init.customerPrivacy?.analyticsProcessingAllowed ?? true) ? 'granted' : 'pending'
}

/** Consent from a 'visitorConsentCollected' payload: analytics allowed or not. */
export const collectedConsent = (payload: { customerPrivacy?: { analyticsProcessingAllowed?: boolean } }): Consent =>
  payload?.customerPrivacy?.analyticsProcessingAllowed ? 'granted' : 'denied'
