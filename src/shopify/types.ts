// Public types of the Shopify Web Pixels entry (`discovery-feedback/shopify`). The Standard API
// and its events are Shopify's own types, from @shopify/web-pixels-extension.
import type { ExtensionApi, ProductVariant } from '@shopify/web-pixels-extension'
import type { CatalogIds, FeedbackError } from '../shared/types'

export type { CatalogIds }

/** The parts of the Standard API the pixel uses: what `register` hands an app pixel, or `api` in a custom pixel. */
export type PixelApi = Pick<ExtensionApi, 'analytics' | 'browser' | 'init' | 'customerPrivacy'>

/** The options of `connectShopify()`: the pixel's settings. */
export interface ShopifyOptions {
  /** Merchant API key, sent as `key` in every event. Required. */
  key: string
  /**
   * Absolute collector URL: the sandbox has no shop page to resolve a relative one against.
   * @example 'https://collector.example/v3/feedback'
   */
  endpoint: string
  /** Minutes without an event after which a new `sid` starts; the storefront tracker's value. Default 30. */
  sessionMinutes?: number
  /** Cookie domain, as the storefront tracker's `cookieDomain` (`'auto'` or a domain). Default: the page's host only. */
  cookieDomain?: string
  /** Mark identity cookies `Secure`, as the storefront tracker does. Default: true on https pages. */
  cookieSecure?: boolean
  /** SameSite of identity cookies, as the storefront tracker's. Default `'Lax'`. */
  cookieSameSite?: 'Lax' | 'Strict' | 'None'
  /**
   * Which page views the pixel sends. `'checkout'`: only the checkout, thank-you and order
   * status pages, where the storefront's script tag cannot run; the script tag sends the
   * others. `'all'`: every page, for a shop whose storefront does not run the script tag.
   * Default `'checkout'`.
   */
  pages?: 'checkout' | 'all'
  /**
   * SPEC's item ids of a Shopify variant, for a catalogue keyed otherwise (by SKU, say).
   * Default: Shopify's product id and variant id, the numbers the product feed carries.
   * @example (variant) => ({ item_id: variant.product.id!, variant_item_id: variant.sku! })
   */
  itemIds?: (variant: ProductVariant) => CatalogIds
  /** Milliseconds other events may wait for more to join their request. A purchase never waits. Default 1000. */
  flushInterval?: number
  /** Send even when the browser signals Global Privacy Control, as the storefront tracker's option. */
  ignoreGlobalPrivacyControl?: boolean
  /** Treat Do-Not-Track (deprecated) as an opt-out, as the storefront tracker's option. */
  respectDoNotTrack?: boolean
  /** Log every event to the console. */
  debug?: boolean
  /** Hears every event that could not be mapped, was refused or could not be sent. */
  onError?: (error: FeedbackError) => void
}

/** What `connectShopify` returns. */
export interface ShopifyConnection {
  /** Sends what waits now; resolves once every request was answered or failed. */
  flush(): Promise<void>
  /** Counts of the pixel's events, as the storefront tracker's `stats()`. */
  stats(): ShopifyStats
}

/** Counts of the pixel's events. */
export interface ShopifyStats {
  /** Waiting: for consent, for the next request, or for an answer. */
  queued: number
  /** Answered 2xx. */
  sent: number
  /** Sends that failed and will be tried again. */
  retried: number
  /** Events given up, by reason; `onError` heard each. */
  dropped: {
    /** Shopify events or line items that could not be mapped onto SPEC's, and calls the rules refused. */
    invalid: number
    /** The collector answered a 4xx that no retry can fix. */
    rejected: number
    /** Larger than a request may be. */
    too_large: number
    /** More than 100 events waited for consent: the newest are not kept. */
    overflow: number
  }
}
