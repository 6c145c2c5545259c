// Google Consent Mode v2 → the tracker's consent: reads `gtag('consent', 'default' | 'update', {…})`
// commands from the data layer, those already there and every later push.
import { consentDriver } from './driver'
import { givenTracker } from '../../shared/given-tracker'
import { keptHere } from './kept'
import { followDataLayer, isArguments, pageDataLayer } from '../follow-data-layer'
import type { Consent, ConsentTarget, StopFollowing } from './types'

/** The options of `googleConsentMode()`. */
export interface GoogleConsentModeOptions {
  /** The data layer to follow. Default `window.dataLayer`, created as `[]` if the page has none yet. */
  dataLayer?: unknown[]
  /** The consent type that decides. Default `'analytics_storage'`; a shop may choose for example `'personalization_storage'`. */
  type?: string
}

/**
 * Follows Google Consent Mode v2 in the page's data layer and drives `tracker.consent()`: the
 * tracker is `'pending'` at once, `'granted'` or `'denied'` as the chosen consent type
 * (`analytics_storage` by default) says, and follows every later `update`. Returns a function
 * that stops following (the tracker's consent stays as it is).
 *
 * ```js
 * googleConsentMode(tracker)
 * ```
 *
 * - Only gtag's own form counts: `gtag('consent', …)` pushes an `Arguments` object. A plain
 *   array or object pushed to the data layer is ignored, as gtag.js ignores it.
 * - No consent command yet: the tracker stays `'pending'`. GTM counts a consent type without a
 *   state as granted (its template API, `addConsentListener`); we don't, because nothing may be
 *   stored or sent until the banner has answered.
 * - `default` commands scoped to a `region` list: the browser does not know the visitor's
 *   country, so each one counts as if it applied here. A default that says `denied` keeps the
 *   tracker pending (the cautious reading of "EEA denied, elsewhere granted"): it is no answer,
 *   and the banner's `update` is still to come. Only defaults that all grant make it granted.
 *   An `update`, which has no region, decides; the last one wins, and a `default` after it
 *   changes nothing, as in gtag. `denied` comes only from an `update`.
 * - An `update` that denies before anything was granted, on a browser that holds nothing of ours
 *   (no `df_uid` or `df_sid` cookie, no stored outbox), keeps the tracker pending. Banners push
 *   such an update on load, before the shopper has chosen (tarteaucitron's built-in Consent
 *   Mode, a Klaro service callback): taken as a refusal it would drop the landing page's events,
 *   and for this visitor a denial has nothing to delete. Nothing is stored or sent while pending,
 *   so a refusal loses nothing; an acceptance sends what the page tracked. After a grant, on
 *   this page or an earlier one (the ids are stored then), an `update` that denies withdraws.
 * - Consent that a CMP's GTM template sets through GTM's sandbox APIs (`setDefaultConsentState`,
 *   `updateConsentState`) never reaches the data layer, so this adapter cannot see it: such a
 *   shop should use its CMP's own adapter.
 *
 * The data layer is followed as `followDataLayer` (integrations/follow-data-layer.ts) says: its
 * `push` wrapped, chaining to the push that was there.
 * @param tracker - The tracker, or any object with its `consent()` (such as `{ consent: (state) => discoveryFeedback('consent', state) }` on a script-tag page).
 * @param options - The data layer to follow, and the consent type that decides.
 */
export function googleConsentMode(tracker: ConsentTarget, options: GoogleConsentModeOptions = {}): StopFollowing {
  if (!givenTracker('googleConsentMode', tracker, ['consent'])) return () => {}
  if (typeof window == 'undefined' && !options.dataLayer) return () => {}
  const dataLayer = pageDataLayer(options.dataLayer)
  const driver = consentDriver(tracker)
  // A data layer that is something else than an array is the page's own business: left alone,
  // and the tracker stays pending.
  if (!dataLayer) {
    driver.set('pending')
    return driver.stop
  }
  const type = options.type || 'analytics_storage'

  let defaultGrants = true
  let defaulted = false
  let updated: Consent | undefined
  let grantedHere = false

  /** Reads one data-layer entry; anything but a consent command for our type changes nothing. */
  const read = (entry: unknown) => {
    if (!isArguments(entry) || entry[0] != 'consent') return
    // gtag('consent', command, settings): the page's own values, unchecked.
    const command: unknown = entry[1]
    const settings: unknown = entry[2]
    const state = settings && typeof settings == 'object' ? (settings as Record<string, unknown>)[type] : undefined
    if (state != 'granted' && state != 'denied') return
    if (command == 'update') updated = state as Consent
    else if (command == 'default') {
      defaulted = true
      if (state == 'denied') defaultGrants = false
    }
  }

  // A default that denies is no answer yet: the banner that set it is still to ask, and the
  // tracker waits (pending) instead of deleting the shopper's ids on every page before the
  // banner's update grants again. Only an update denies.
  const decide = () => {
    let next = updated || (defaulted && defaultGrants ? 'granted' : 'pending')
    if (next == 'granted') grantedHere = true
    // A denial with nothing of ours to delete is no different from no answer yet: the banner
    // may deny on load, before the shopper chose, and the landing page's events must wait.
    else if (next == 'denied' && !grantedHere && !keptHere()) next = 'pending'
    driver.set(next)
  }

  // Pending at once, before anything is read: from here on nothing is stored or sent without an answer.
  driver.set('pending')
  // The commands pushed before are read first, all of them, and the tracker hears only where
  // they led, not each step on the way; after them, each push decides as it comes.
  let pastRead = false
  let stopReading: () => void
  try {
    stopReading = followDataLayer(dataLayer, (entry) => {
      read(entry)
      if (pastRead) decide()
    })
  } catch {
    // A data layer that cannot be followed (frozen, or an entry whose getter throws): the
    // tracker stays pending, and nothing is thrown into the page.
    return driver.stop
  }
  pastRead = true
  decide()

  return () => {
    driver.stop()
    stopReading()
  }
}
