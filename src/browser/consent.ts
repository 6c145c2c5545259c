import { expectOneOf } from '../shared/rules'
import type { Identity } from './identity'
import type { Outbox } from './outbox'
import type { Consent, TrackerOptions } from './types'

/**
 * The shopper's choice and what each state allows: 'granted' stores and sends; 'pending'
 * keeps events in memory, without identity, storage or requests; 'denied' deletes our cookies
 * and every stored outbox, and keeps nothing. Global Privacy Control is a legally binding
 * opt-out in several US states, so it means 'denied' whatever the site says; Do-Not-Track is
 * deprecated and honoured only when the site asks for it.
 */
const STATES: Consent[] = ['granted', 'pending', 'denied']

export function createConsent(settings: TrackerOptions, outbox: Outbox, identity: Identity, onGranted: () => void) {
  const optedOut =
    ((navigator as any).globalPrivacyControl && !settings.ignoreGlobalPrivacyControl) || (settings.respectDoNotTrack && navigator.doNotTrack == '1')
  let state: Consent = optedOut ? 'denied' : settings.consent || 'granted'
  const persist = () => outbox.setPersist(state == 'granted' && settings.storage != 'memory')
  persist()

  return {
    granted: () => state == 'granted',
    denied: () => state == 'denied',
    set(next: Consent) {
      expectOneOf('consent', 'state', STATES, next)
      if (optedOut) return
      state = next
      if (next == 'denied') {
        // Withdrawn: nothing of ours stays behind, and nothing more is stored or sent.
        outbox.forget()
        identity.forget()
        return
      }
      if (next == 'granted') {
        // Events tracked while pending get the shopper's identity now.
        for (const entry of outbox.entries) {
          if (!entry.event.user) {
            entry.event.user = identity.user(true)
            entry.json = undefined
          }
        }
      }
      persist()
      if (next == 'granted') onGranted()
    }
  }
}

export type ConsentControl = ReturnType<typeof createConsent>
