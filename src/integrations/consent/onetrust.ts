// OneTrust: the tracker's consent from the groups the visitor left active (OneTrust's JavaScript
// events guide, developer.onetrust.com/onetrust/docs/javascript-events-guide).
import { consentDriver } from './driver'
import { givenTracker } from '../../shared/given-tracker'
import type { Consent, ConsentTarget, StopFollowing } from './types'

/** The options of `oneTrustConsent()`. */
export interface OneTrustOptions {
  /**
   * The OneTrust group that covers analytics. `'C0002'` (Performance) by default: OneTrust's
   * default id, which a site can rename or replace in its OneTrust settings, so check yours.
   * @example { category: 'C0007' }
   */
  category?: string
}

/** What the adapter reads of OneTrust's SDK (also the legacy `Optanon` object). */
interface OneTrustSdk {
  IsAlertBoxClosed?: () => boolean
  OnConsentChanged?: (callback: (event?: { detail?: unknown }) => void) => void
  GetDomainData?: () => { ConsentModel?: { Name?: string }; ShowAlertNotice?: boolean } | undefined
}

type OneTrustWindow = {
  OneTrust?: OneTrustSdk
  Optanon?: OneTrustSdk
  OnetrustActiveGroups?: unknown
  OptanonActiveGroups?: unknown
}

/** A call into the banner's code, which must not throw into the page: `undefined` when it throws. */
const attempt = <T>(read: () => T): T | undefined => {
  try {
    return read()
  } catch {
    return undefined
  }
}

/**
 * Follows OneTrust's choice for one group: the tracker is `'pending'` at once, `'granted'` when the
 * group is active, `'denied'` when it is not and the visitor has decided, and follows every later
 * change (`OneTrustGroupsUpdated`, `OneTrust.OnConsentChanged`). Returns a function that stops
 * following. The shop's `OptanonWrapper` is left alone.
 *
 * "Decided" is `OneTrust.IsAlertBoxClosed()`, or a consent model other than opt-in (under opt-out
 * and implied consent the groups are active by default, so an inactive one was turned off), or a
 * banner OneTrust does not show (`ShowAlertNotice === false`: no answer is coming). Before that,
 * and while OneTrust has not loaded, the tracker stays `'pending'`.
 * @param tracker - The tracker, or any object with its `consent()` (such as `{ consent: (state) => discoveryFeedback('consent', state) }` on a script-tag page).
 * @param options - The OneTrust category that decides.
 */
export function oneTrustConsent(tracker: ConsentTarget, options: OneTrustOptions = {}): StopFollowing {
  if (!givenTracker('oneTrustConsent', tracker, ['consent'])) return () => {}
  const category = options.category ?? 'C0002'
  const driver = consentDriver(tracker)
  let hooked: OneTrustSdk | undefined
  const set = driver.set
  set('pending')
  if (typeof window == 'undefined') return driver.stop
  const page = window as Window & OneTrustWindow

  /** The state OneTrust gives, from the active groups of an event or else of its globals. */
  const read = (groups?: unknown): Consent => {
    const sdk = page.OneTrust ?? page.Optanon
    if (!sdk) return 'pending'
    // A comma string such as ",C0001,C0003," in the globals; an array in the events' detail.
    const active = Array.isArray(groups) ? groups : String(page.OnetrustActiveGroups ?? page.OptanonActiveGroups ?? '').split(',')
    if (active.some((id) => String(id).trim() == category)) return 'granted'
    const domain = attempt(() => sdk.GetDomainData?.())
    const model = String(domain?.ConsentModel?.Name ?? 'opt-in').toLowerCase()
    const decided = attempt(() => sdk.IsAlertBoxClosed?.()) === true || model != 'opt-in' || domain?.ShowAlertNotice === false
    return decided ? 'denied' : 'pending'
  }

  const update = (event?: { detail?: unknown }) => {
    if (driver.stopped) return
    set(read(event?.detail))
    // OnConsentChanged exists once the SDK has loaded, which its OneTrustGroupsUpdated announces.
    const sdk = page.OneTrust
    if (sdk && hooked != sdk && typeof sdk.OnConsentChanged == 'function') {
      hooked = sdk
      // OneTrust offers no way to remove this callback; after stop() it does nothing.
      attempt(() => sdk.OnConsentChanged!(update))
    }
  }

  const onGroups = (event: Event) => update(event as CustomEvent)
  window.addEventListener('OneTrustGroupsUpdated', onGroups)
  // Loaded before us: its load event has passed, so read what it holds now.
  update()
  return () => {
    driver.stop()
    window.removeEventListener('OneTrustGroupsUpdated', onGroups)
  }
}
