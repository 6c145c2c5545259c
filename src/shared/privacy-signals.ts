/** The options of a tracker that say how it treats the browser's privacy signals. */
export interface PrivacySignalOptions {
  ignoreGlobalPrivacyControl?: boolean
  respectDoNotTrack?: boolean
}

/**
 * Whether the browser opts the shopper out, whatever the site says: Global Privacy Control
 * is a legally binding opt-out in several US states; Do-Not-Track is deprecated and honoured
 * only when the site asks for it. The navigator may be a page's or a worker's (a Shopify app
 * pixel runs in one), whose navigator has neither signal in most browsers.
 */
export function optedOut(settings: PrivacySignalOptions): boolean {
  // Not yet in every browser's Navigator type (Firefox, Brave and extensions set it).
  const browser = globalThis.navigator as (Navigator & { globalPrivacyControl?: boolean }) | undefined
  return (!!browser?.globalPrivacyControl && !settings.ignoreGlobalPrivacyControl) || (!!settings.respectDoNotTrack && browser?.doNotTrack == '1')
}
