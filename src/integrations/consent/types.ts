// What every consent adapter (googleConsentMode, tcfConsent, oneTrustConsent, cookiebotConsent,
// shopifyConsent) works with: the tracker's consent(), and a function that stops following the banner.
import type { Consent, Tracker } from '../../browser/types'

/**
 * What an adapter drives: any object with the tracker's `consent(state)`. With the tracker's
 * `use` too, the adapter hears the tracker's own state, the shop's direct calls included.
 */
export type ConsentTarget = Pick<Tracker, 'consent'> & Partial<Pick<Tracker, 'use'>>

/** Stops following the banner: listeners removed, the tracker's consent left as it is. */
export type StopFollowing = () => void

export type { Consent }
