import type { Consent, TrackerOptions } from './types'

/*
 * The shopper's choice and what each state allows: 'granted' stores and sends; 'pending'
 * keeps events in memory, without identity, storage or requests; 'denied' deletes our cookies
 * and every stored outbox, and keeps nothing. The tracker holds the state and applies it.
 */
export const STATES: Consent[] = ['granted', 'pending', 'denied']

/**
 * Whether the browser opts the shopper out, whatever the site says: Global Privacy Control
 * is a legally binding opt-out in several US states; Do-Not-Track is deprecated and honoured
 * only when the site asks for it.
 */
export function optedOut(settings: TrackerOptions): boolean {
  // Not yet in every browser's Navigator type (Firefox, Brave and extensions set it).
  const gpc = (navigator as Navigator & { globalPrivacyControl?: boolean }).globalPrivacyControl
  return (!!gpc && !settings.ignoreGlobalPrivacyControl) || (!!settings.respectDoNotTrack && navigator.doNotTrack == '1')
}
