import type { Consent } from './types'

/*
 * The shopper's choice and what each state allows: 'granted' stores and sends; 'pending'
 * keeps events in memory, without identity, storage or requests; 'denied' deletes our cookies
 * and every stored outbox, and keeps nothing. The tracker holds the state and applies it; the
 * browser's own opt-outs (Global Privacy Control, Do-Not-Track) are read by shared/privacy-signals.ts.
 */
export const STATES: Consent[] = ['granted', 'pending', 'denied']
