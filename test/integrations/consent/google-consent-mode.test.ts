import { afterEach, describe, expect, it } from 'vitest'
import { googleConsentMode } from '../../../src/integrations/consent/google-consent-mode'
import type { Consent } from '../../../src/integrations/consent/types'

/** A tracker that only records what it was told. */
const fakeTracker = () => {
  const calls: Consent[] = []
  return { calls, consent: (state: Consent) => void calls.push(state) }
}

// Google's own snippet: each call pushes its real `arguments` object.
const gtagOf = (dataLayer: unknown[]) =>
  function gtag(..._args: unknown[]) {
    // eslint-disable-next-line prefer-rest-params
    dataLayer.push(arguments)
  }

const page = window as Window & { dataLayer?: unknown[] }
afterEach(() => {
  delete page.dataLayer
})

describe('googleConsentMode', () => {
  it('is pending at once and stays pending while the data layer has no consent command', () => {
    const tracker = fakeTracker()
    googleConsentMode(tracker)
    expect(Array.isArray(page.dataLayer) && page.dataLayer.length).toBe(0)
    const gtag = gtagOf(page.dataLayer!)
    gtag('js', new Date())
    gtag('config', 'G-XXXX')
    gtag('event', 'page_view')
    expect(tracker.calls).toEqual(['pending'])
  })

  it('reads commands pushed before it started, then follows later updates both ways', () => {
    const dataLayer: unknown[] = []
    const gtag = gtagOf(dataLayer)
    gtag('consent', 'default', { ad_storage: 'denied', analytics_storage: 'denied', wait_for_update: 500 })
    const tracker = fakeTracker()
    googleConsentMode(tracker, { dataLayer })
    // A denying default is no answer: pending, so a returning shopper's ids are not deleted on
    // every page before the banner's update grants again.
    expect(tracker.calls).toEqual(['pending'])
    gtag('consent', 'update', { ad_storage: 'granted' })
    expect(tracker.calls).toEqual(['pending'])
    gtag('consent', 'update', { analytics_storage: 'granted' })
    expect(tracker.calls).toEqual(['pending', 'granted'])
    gtag('consent', 'update', { analytics_storage: 'denied' })
    expect(tracker.calls).toEqual(['pending', 'granted', 'denied'])
    // The page's entries all reached the data layer, in order.
    expect(dataLayer).toHaveLength(4)
  })

  it('ignores the same command pushed as a plain array or object, as gtag does', () => {
    const dataLayer: unknown[] = []
    const tracker = fakeTracker()
    googleConsentMode(tracker, { dataLayer })
    dataLayer.push(['consent', 'update', { analytics_storage: 'granted' }])
    dataLayer.push({ 0: 'consent', 1: 'update', 2: { analytics_storage: 'granted' }, length: 3 })
    dataLayer.push({ event: 'consent_update', analytics_storage: 'granted' })
    expect(tracker.calls).toEqual(['pending'])
    gtagOf(dataLayer)('consent', 'update', { analytics_storage: 'granted' })
    expect(tracker.calls).toEqual(['pending', 'granted'])
  })

  it('follows the type chosen in options', () => {
    const dataLayer: unknown[] = []
    const tracker = fakeTracker()
    googleConsentMode(tracker, { dataLayer, type: 'personalization_storage' })
    const gtag = gtagOf(dataLayer)
    gtag('consent', 'update', { analytics_storage: 'granted' })
    expect(tracker.calls).toEqual(['pending'])
    gtag('consent', 'update', { personalization_storage: 'granted' })
    expect(tracker.calls).toEqual(['pending', 'granted'])
  })

  it('counts a region-scoped denied default wherever the visitor is (pending), until an update decides', () => {
    const dataLayer: unknown[] = []
    const gtag = gtagOf(dataLayer)
    gtag('consent', 'default', { analytics_storage: 'granted' })
    gtag('consent', 'default', { analytics_storage: 'denied', region: ['AT', 'BE', 'DE', 'FR'] })
    const tracker = fakeTracker()
    googleConsentMode(tracker, { dataLayer })
    expect(tracker.calls).toEqual(['pending'])
    gtag('consent', 'update', { analytics_storage: 'granted' })
    // A default after the update changes nothing.
    gtag('consent', 'default', { analytics_storage: 'denied' })
    expect(tracker.calls).toEqual(['pending', 'granted'])
  })

  it('grants on a granted default alone', () => {
    const dataLayer: unknown[] = []
    gtagOf(dataLayer)('consent', 'default', { analytics_storage: 'granted' })
    const tracker = fakeTracker()
    googleConsentMode(tracker, { dataLayer })
    expect(tracker.calls).toEqual(['pending', 'granted'])
  })

  it('chains to a push the page wrapped before it, and still reads when that push throws', () => {
    const dataLayer: unknown[] = []
    const seen: unknown[] = []
    const original = dataLayer.push
    dataLayer.push = function (this: unknown[], ...items: unknown[]) {
      seen.push(...items)
      const length = original.apply(this, items)
      if (seen.length == 1) throw new Error('the page’s own bug')
      return length
    }
    const tracker = fakeTracker()
    googleConsentMode(tracker, { dataLayer })
    const gtag = gtagOf(dataLayer)
    // The page's error is the page's; ours is not added to it, and the command was read.
    expect(() => gtag('consent', 'update', { analytics_storage: 'granted' })).toThrow('the page’s own bug')
    expect(tracker.calls).toEqual(['pending', 'granted'])
    gtag('consent', 'update', { analytics_storage: 'denied' })
    expect(tracker.calls).toEqual(['pending', 'granted', 'denied'])
    expect(seen).toHaveLength(2)
    expect(dataLayer).toHaveLength(2)
  })

  it('stays in the chain of a push wrapped after it (GTM does so), and keeps reading when that wrapper throws after chaining', () => {
    const dataLayer: unknown[] = []
    const tracker = fakeTracker()
    googleConsentMode(tracker, { dataLayer })
    const ours = dataLayer.push
    dataLayer.push = function (this: unknown[], ...items: unknown[]) {
      ours.apply(this, items)
      throw new Error('a later wrapper’s bug')
    }
    expect(() => gtagOf(dataLayer)('consent', 'update', { analytics_storage: 'granted' })).toThrow('a later wrapper’s bug')
    expect(tracker.calls).toEqual(['pending', 'granted'])
  })

  it('never throws into the page: a hostile entry and a throwing tracker', () => {
    const dataLayer: unknown[] = []
    const tracker = {
      calls: 0,
      consent() {
        this.calls++
        throw new Error('broken target')
      }
    }
    expect(() => googleConsentMode(tracker, { dataLayer })).not.toThrow()
    const gtag = gtagOf(dataLayer)
    const hostile = Object.defineProperty({}, 'analytics_storage', {
      get() {
        throw new Error('getter')
      }
    })
    expect(() => gtag('consent', 'update', hostile)).not.toThrow()
    expect(() => gtag('consent', 'update', { analytics_storage: 'granted' })).not.toThrow()
    expect(tracker.calls).toBe(2)
  })

  it('never throws into the page for a data layer it cannot follow: frozen, or an entry whose getter throws; the tracker stays pending', () => {
    const frozen = Object.freeze([]) as unknown[]
    const trapped: unknown[] = []
    Object.defineProperty(trapped, 0, {
      enumerable: true,
      get() {
        throw new Error('trap')
      }
    })
    for (const dataLayer of [frozen, trapped]) {
      const tracker = fakeTracker()
      let stop: (() => void) | undefined
      expect(() => (stop = googleConsentMode(tracker, { dataLayer }))).not.toThrow()
      expect(tracker.calls).toEqual(['pending'])
      expect(() => stop!()).not.toThrow()
    }
  })

  it('stop restores the push it replaced, and reads nothing more', () => {
    const dataLayer: unknown[] = []
    const before = dataLayer.push
    const tracker = fakeTracker()
    const stop = googleConsentMode(tracker, { dataLayer })
    expect(dataLayer.push).not.toBe(before)
    stop()
    expect(dataLayer.push).toBe(before)
    gtagOf(dataLayer)('consent', 'update', { analytics_storage: 'granted' })
    expect(tracker.calls).toEqual(['pending'])
    expect(dataLayer).toHaveLength(1)
  })

  it('stop leaves a later wrapper in place; ours then only passes pushes on', () => {
    const dataLayer: unknown[] = []
    const tracker = fakeTracker()
    const stop = googleConsentMode(tracker, { dataLayer })
    const ours = dataLayer.push
    const later = function (this: unknown[], ...items: unknown[]) {
      return ours.apply(this, items)
    }
    dataLayer.push = later
    stop()
    expect(dataLayer.push).toBe(later)
    gtagOf(dataLayer)('consent', 'update', { analytics_storage: 'granted' })
    expect(tracker.calls).toEqual(['pending'])
    expect(dataLayer).toHaveLength(1)
  })

  it('uses the window.dataLayer a page already has', () => {
    page.dataLayer = []
    const existing = page.dataLayer
    const tracker = fakeTracker()
    googleConsentMode(tracker)
    expect(page.dataLayer).toBe(existing)
    gtagOf(existing)('consent', 'update', { analytics_storage: 'granted' })
    expect(tracker.calls).toEqual(['pending', 'granted'])
  })

  it('reads every command already in a long data layer', () => {
    const dataLayer: unknown[] = Array.from({ length: 1200 }, () => ({ event: 'gtm.dom' }))
    gtagOf(dataLayer)('consent', 'update', { analytics_storage: 'granted' })
    const tracker = fakeTracker()
    googleConsentMode(tracker, { dataLayer })
    expect(tracker.calls).toEqual(['pending', 'granted'])
  })
})

describe('googleConsentMode: a banner that denies before the shopper chose', () => {
  afterEach(() => {
    document.cookie = 'df_uid=; max-age=0; path=/'
    document.cookie = 'df_sid=; max-age=0; path=/'
    localStorage.clear()
  })

  it('keeps a new visitor pending through an early denying update, so that a later acceptance grants and a withdrawal then denies', () => {
    const dataLayer: unknown[] = []
    const gtag = gtagOf(dataLayer)
    const tracker = fakeTracker()
    googleConsentMode(tracker, { dataLayer })
    // tarteaucitron's built-in Consent Mode and a Klaro service callback do this on load.
    gtag('consent', 'default', { analytics_storage: 'denied' })
    gtag('consent', 'update', { analytics_storage: 'denied' })
    expect(tracker.calls).toEqual(['pending'])
    gtag('consent', 'update', { analytics_storage: 'granted' })
    gtag('consent', 'update', { analytics_storage: 'denied' })
    expect(tracker.calls).toEqual(['pending', 'granted', 'denied'])
  })

  it('reads an early denial already in the data layer as pending too, and a refusal after it changes nothing', () => {
    const dataLayer: unknown[] = []
    const gtag = gtagOf(dataLayer)
    gtag('consent', 'update', { analytics_storage: 'denied' })
    const tracker = fakeTracker()
    googleConsentMode(tracker, { dataLayer })
    gtag('consent', 'update', { analytics_storage: 'denied' })
    expect(tracker.calls).toEqual(['pending'])
  })

  it.each([
    ['the uid cookie', () => void (document.cookie = 'df_uid=V1StGXR8_Z5jdHi6B-myT; path=/')],
    ['the sid cookie', () => void (document.cookie = 'df_sid=3f9aK2mQ; path=/')],
    ['a stored outbox', () => localStorage.setItem('df_q_AbCdEfGhIj.0', '{}')]
  ])('denies a returning shopper whose browser holds %s, so that what was kept is deleted', (_, keep) => {
    keep()
    const dataLayer: unknown[] = []
    const tracker = fakeTracker()
    googleConsentMode(tracker, { dataLayer })
    gtagOf(dataLayer)('consent', 'update', { analytics_storage: 'denied' })
    expect(tracker.calls).toEqual(['pending', 'denied'])
  })

  it('does not take a cookie of someone else whose name only begins like ours for one of ours', () => {
    document.cookie = 'df_uid_other=1; path=/'
    const dataLayer: unknown[] = []
    const tracker = fakeTracker()
    googleConsentMode(tracker, { dataLayer })
    gtagOf(dataLayer)('consent', 'update', { analytics_storage: 'denied' })
    expect(tracker.calls).toEqual(['pending'])
    document.cookie = 'df_uid_other=; max-age=0; path=/'
  })
})
