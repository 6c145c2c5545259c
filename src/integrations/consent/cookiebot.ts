// Cookiebot: the tracker's consent from `Cookiebot.consent` and its window events
// (www.cookiebot.com/en/developer/).
import { consentDriver } from './driver'
import { givenTracker } from '../../shared/given-tracker'
import type { ConsentTarget, StopFollowing } from './types'

/** The options of `cookiebotConsent()`. */
export interface CookiebotOptions {
  /** The Cookiebot category that covers analytics: `'statistics'` by default. */
  category?: 'statistics' | 'preferences' | 'marketing'
}

type CookiebotWindow = {
  Cookiebot?: { consent?: Partial<Record<'necessary' | 'preferences' | 'statistics' | 'marketing', boolean>>; hasResponse?: boolean }
}

/**
 * Cookiebot raises these on `window`: ConsentReady once the consent is known (also a returning
 * visitor's), Accept and Decline on each answer, and again on each page of a visitor who has answered.
 */
const EVENTS = ['CookiebotOnConsentReady', 'CookiebotOnAccept', 'CookiebotOnDecline']

/**
 * Follows Cookiebot's choice for one category: the tracker is `'pending'` at once, `'granted'` when
 * `Cookiebot.consent[category]` is true, `'denied'` when the visitor has answered
 * (`Cookiebot.hasResponse`) without it, and follows every later answer, a withdrawal included.
 * Works whether Cookiebot loads before or after. Returns a function that stops following.
 * @param tracker - The tracker, or any object with its `consent()` (such as `{ consent: (state) => discoveryFeedback('consent', state) }` on a script-tag page).
 * @param options - The Cookiebot category that decides.
 */
export function cookiebotConsent(tracker: ConsentTarget, options: CookiebotOptions = {}): StopFollowing {
  if (!givenTracker('cookiebotConsent', tracker, ['consent'])) return () => {}
  const category = options.category ?? 'statistics'
  const driver = consentDriver(tracker)
  const set = driver.set
  set('pending')
  if (typeof window == 'undefined') return driver.stop
  const page = window as Window & CookiebotWindow

  const update = () => {
    try {
      const cookiebot = page.Cookiebot
      const consent = cookiebot?.consent
      if (!consent) return
      set(consent[category] === true ? 'granted' : cookiebot!.hasResponse === true ? 'denied' : 'pending')
    } catch {
      // A banner whose properties throw leaves the state as it was; the page goes on.
    }
  }

  for (const name of EVENTS) window.addEventListener(name, update)
  // Loaded before us: its events have passed, so read what it holds now.
  update()
  return () => {
    driver.stop()
    for (const name of EVENTS) window.removeEventListener(name, update)
  }
}
