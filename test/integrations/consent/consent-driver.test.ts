import { describe, expect, it, vi } from 'vitest'
import { cookiebotConsent } from '../../../src/integrations/consent/cookiebot'
import { googleConsentMode } from '../../../src/integrations/consent/google-consent-mode'
import { oneTrustConsent } from '../../../src/integrations/consent/onetrust'
import { shopifyConsent } from '../../../src/integrations/consent/shopify-privacy'
import { tcfConsent } from '../../../src/integrations/consent/tcf'
import type { Consent, ConsentTarget, StopFollowing } from '../../../src/integrations/consent/types'
import { isolateEachTest, make, network } from '../../support/helpers'

// The adapters drive a real tracker here, which the shop may also drive itself.

const click = { rid: 's-1', item_id: '42', variant_item_id: '421' }
const page = window as any

isolateEachTest()

/** Cookiebot as far as the adapter reads it: its consent, and the window event of each answer. */
function cookiebot() {
  page.Cookiebot = { consent: { statistics: false }, hasResponse: false }
  const answer = (statistics: boolean) => {
    page.Cookiebot.consent.statistics = statistics
    page.Cookiebot.hasResponse = true
    window.dispatchEvent(new Event(statistics ? 'CookiebotOnAccept' : 'CookiebotOnDecline'))
  }
  return { accept: () => answer(true), decline: () => answer(false), unload: () => delete page.Cookiebot }
}

/** Google's snippet: each call pushes its real `arguments` object. */
const gtagOf = (dataLayer: unknown[]) =>
  function gtag(..._args: unknown[]) {
    // eslint-disable-next-line prefer-rest-params
    dataLayer.push(arguments)
  }

/** The events that reached the collector after one click was tracked and flushed. */
const clickSent = (tracker: ReturnType<typeof make>, net: ReturnType<typeof network>) => {
  tracker.clickItem(click)
  tracker.flush()
  return net.events().some((event) => event.event == 'click-item')
}

describe('the consent adapters follow the tracker, not only their own last word', () => {
  it('the shop denies directly, then the shopper grants again in the banner: the tracker is granted', () => {
    const net = network()
    const tracker = make()
    const banner = cookiebot()
    const stop = cookiebotConsent(tracker)
    banner.accept()
    // The shop's own "do not track me" link.
    tracker.consent('denied')
    banner.accept()
    expect(clickSent(tracker, net)).toBe(true)
    stop()
    banner.unload()
  })

  it('the shop grants directly, then the shopper withdraws again in the banner: the tracker is denied', () => {
    const net = network()
    const tracker = make()
    const dataLayer: unknown[] = []
    const gtag = gtagOf(dataLayer)
    const stop = googleConsentMode(tracker, { dataLayer })
    gtag('consent', 'update', { analytics_storage: 'granted' })
    gtag('consent', 'update', { analytics_storage: 'denied' })
    // The shop's own code grants, past the banner.
    tracker.consent('granted')
    gtag('consent', 'update', { analytics_storage: 'denied' })
    expect(clickSent(tracker, net)).toBe(false)
    stop()
  })

  it('a banner that repeats itself still reaches the tracker once', () => {
    const tracker = make()
    const consent = vi.spyOn(tracker, 'consent')
    const banner = cookiebot()
    const stop = cookiebotConsent(tracker)
    banner.accept()
    banner.accept()
    banner.decline()
    banner.decline()
    expect(consent.mock.calls.map(([state]) => state)).toEqual(['pending', 'granted', 'denied'])
    stop()
    banner.unload()
  })

  it("a page's wrapper without use() is told each state of the banner once, as before", () => {
    const states: Consent[] = []
    const banner = cookiebot()
    const stop = cookiebotConsent({ consent: (state) => void states.push(state) })
    banner.accept()
    banner.accept()
    expect(states).toEqual(['pending', 'granted'])
    stop()
    banner.unload()
  })
})

describe("an adapter's stop function removes its add-on", () => {
  const adapters: Record<string, (target: ConsentTarget) => StopFollowing> = {
    cookiebotConsent,
    googleConsentMode,
    'googleConsentMode with a data layer that is no array': (target) => googleConsentMode(target, { dataLayer: {} as unknown[] }),
    oneTrustConsent,
    shopifyConsent,
    tcfConsent
  }
  for (const [name, follow] of Object.entries(adapters)) {
    it(name, () => {
      const tracker = make()
      const use = vi.spyOn(tracker, 'use')
      const stop = follow(tracker)
      expect(use).toHaveBeenCalledTimes(1)
      // The add-on the adapter added hears the tracker until stop(), and nothing after.
      const consent = vi.spyOn(use.mock.calls[0][0], 'consent')
      tracker.consent('pending')
      expect(consent).toHaveBeenLastCalledWith('pending')
      stop()
      tracker.consent('denied')
      expect(consent).toHaveBeenCalledTimes(1)
      delete page.dataLayer
    })
  }
})
