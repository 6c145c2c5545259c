// Shopify's storefront Customer Privacy API: the tracker's consent from the visitor's analytics
// choice (shopify.dev/docs/api/customer-privacy). The app pixel reads the same choice through
// the pixel API (src/shopify/consent.ts).
import { consentDriver } from './driver'
import { givenTracker } from '../../shared/given-tracker'
import type { ConsentTarget, StopFollowing } from './types'

/** The options of `shopifyConsent()`. */
export interface ShopifyConsentOptions {
  /**
   * Whether to load the API with `Shopify.loadFeatures` when `Shopify.customerPrivacy` is missing.
   * True by default; false when the theme loads it itself (the adapter then waits for it).
   */
  load?: boolean
}

interface CustomerPrivacy {
  analyticsProcessingAllowed?: () => boolean
  shouldShowBanner?: () => boolean
  // The API's older names, still served.
  userCanBeTracked?: () => boolean
  shouldShowGDPRBanner?: () => boolean
}

type ShopifyWindow = {
  Shopify?: {
    customerPrivacy?: CustomerPrivacy
    loadFeatures?: (features: { name: string; version: string }[], callback: (error?: unknown) => void) => void
  }
}

/**
 * Follows the storefront visitor's analytics choice: the tracker is `'pending'` at once, then
 * - `'granted'` when `analyticsProcessingAllowed()` (or the older `userCanBeTracked()`) is true,
 *   which it is by default where the region needs no consent;
 * - `'denied'` when analytics is not allowed and `shouldShowBanner()` is false: the visitor has
 *   declined, or no banner will ask, so no answer is coming and nothing may be kept;
 * - `'pending'` otherwise, until the document's `visitorConsentCollected` (its
 *   `detail.analyticsAllowed`) settles it, as the app pixel does. Later choices are followed too.
 * Loads the API with `Shopify.loadFeatures` when it is missing. Returns a function that stops following.
 * @param tracker - The tracker, or any object with its `consent()` (such as `{ consent: (state) => discoveryFeedback('consent', state) }` on a script-tag page).
 * @param options - How to reach Shopify's Customer Privacy API.
 */
export function shopifyConsent(tracker: ConsentTarget, options: ShopifyConsentOptions = {}): StopFollowing {
  if (!givenTracker('shopifyConsent', tracker, ['consent'])) return () => {}
  const driver = consentDriver(tracker)
  const set = driver.set
  set('pending')
  if (typeof window == 'undefined') return driver.stop
  const page = window as Window & ShopifyWindow

  /** Reads the API if it is there; each call is the banner's code, so none may throw into the page. */
  const read = () => {
    try {
      const api = page.Shopify?.customerPrivacy
      if (!api) return false
      const allowed = api.analyticsProcessingAllowed ?? api.userCanBeTracked
      const banner = api.shouldShowBanner ?? api.shouldShowGDPRBanner
      if (!allowed) return true
      if (allowed.call(api) === true) set('granted')
      else set(banner && banner.call(api) === false ? 'denied' : 'pending')
    } catch {
      // The state stays as it was.
    }
    return true
  }

  const collected = (event: Event) => {
    const allowed = (event as CustomEvent<{ analyticsAllowed?: unknown } | undefined>).detail?.analyticsAllowed
    if (typeof allowed == 'boolean') set(allowed ? 'granted' : 'denied')
    else read()
  }
  // Hydrogen announces the API's arrival; a theme that loads it itself is read then too.
  const loaded = () => read()
  document.addEventListener('visitorConsentCollected', collected)
  document.addEventListener('shopifyCustomerPrivacyApiLoaded', loaded)

  if (!read() && options.load !== false) {
    try {
      page.Shopify?.loadFeatures?.([{ name: 'consent-tracking-api', version: '0.1' }], (error) => {
        // Not loaded: nothing can be known, the tracker stays pending.
        if (!error && !driver.stopped) read()
      })
    } catch {
      // Not loaded; a later visitorConsentCollected can still settle it.
    }
  }
  return () => {
    driver.stop()
    document.removeEventListener('visitorConsentCollected', collected)
    document.removeEventListener('shopifyCustomerPrivacyApiLoaded', loaded)
  }
}
