import { afterEach, describe, expect, it } from 'vitest'
import { shopifyConsent } from '../../../src/integrations/consent/shopify-privacy'
import { recordingTarget } from './banner-target'

const page = window as any

/**
 * Shopify's storefront Customer Privacy API as shopify.dev documents it: loadFeatures puts
 * customerPrivacy on window.Shopify; a choice raises visitorConsentCollected on the document.
 */
function fakeShopify({ allowed = false, banner = true, later = false } = {}) {
  const state = { allowed, banner }
  const customerPrivacy = {
    analyticsProcessingAllowed: () => state.allowed,
    shouldShowBanner: () => state.banner
  }
  const loads: unknown[] = []
  let finish = () => {}
  page.Shopify = {
    loadFeatures: (features: unknown, callback: (error?: unknown) => void) => {
      loads.push(features)
      finish = () => {
        page.Shopify.customerPrivacy = customerPrivacy
        callback()
      }
      if (!later) finish()
    }
  }
  return {
    state,
    loads,
    customerPrivacy,
    finish: () => finish(),
    choose: (analyticsAllowed: boolean) => {
      Object.assign(state, { allowed: analyticsAllowed, banner: false })
      document.dispatchEvent(new CustomEvent('visitorConsentCollected', { detail: { analyticsAllowed, marketingAllowed: false } }))
    }
  }
}

afterEach(() => {
  delete page.Shopify
})

describe('shopifyConsent', () => {
  it("loads the API when it is missing; pending until it answers, then until the visitor's choice", () => {
    const shop = fakeShopify({ later: true })
    const { target, states } = recordingTarget()
    const stop = shopifyConsent(target)
    expect(shop.loads).toEqual([[{ name: 'consent-tracking-api', version: '0.1' }]])
    expect(states).toEqual(['pending'])
    shop.finish()
    expect(states).toEqual(['pending'])
    shop.choose(true)
    expect(states).toEqual(['pending', 'granted'])
    // Withdrawal through the privacy settings.
    shop.choose(false)
    expect(states).toEqual(['pending', 'granted', 'denied'])
    stop()
  })

  it('API already there and analytics allowed (no consent needed, or given before): granted at once, nothing loaded', () => {
    const shop = fakeShopify({ allowed: true })
    page.Shopify.customerPrivacy = shop.customerPrivacy
    const { target, states } = recordingTarget()
    shopifyConsent(target)()
    expect(states).toEqual(['pending', 'granted'])
    expect(shop.loads).toEqual([])
  })

  it('not allowed and no banner to show (declined before): denied', () => {
    fakeShopify({ allowed: false, banner: false })
    const { target, states } = recordingTarget()
    shopifyConsent(target)()
    expect(states).toEqual(['pending', 'denied'])
  })

  it('falls back to the older userCanBeTracked and shouldShowGDPRBanner', () => {
    page.Shopify = { customerPrivacy: { userCanBeTracked: () => false, shouldShowGDPRBanner: () => true } }
    const first = recordingTarget()
    shopifyConsent(first.target)()
    expect(first.states).toEqual(['pending'])
    page.Shopify.customerPrivacy.userCanBeTracked = () => true
    const second = recordingTarget()
    shopifyConsent(second.target)()
    expect(second.states).toEqual(['pending', 'granted'])
  })

  it('without Shopify on the page: pending, and a later visitorConsentCollected still settles it', () => {
    const { target, states } = recordingTarget()
    const stop = shopifyConsent(target)
    document.dispatchEvent(new CustomEvent('visitorConsentCollected', { detail: { analyticsAllowed: true } }))
    expect(states).toEqual(['pending', 'granted'])
    stop()
  })

  it('load: false waits for the theme to load the API (Hydrogen announces it)', () => {
    const shop = fakeShopify({ allowed: true })
    const { target, states } = recordingTarget()
    const stop = shopifyConsent(target, { load: false })
    expect(shop.loads).toEqual([])
    expect(states).toEqual(['pending'])
    page.Shopify.customerPrivacy = shop.customerPrivacy
    document.dispatchEvent(new Event('shopifyCustomerPrivacyApiLoaded'))
    expect(states).toEqual(['pending', 'granted'])
    stop()
  })

  it('stop(): neither a late load nor a later choice is followed', () => {
    const shop = fakeShopify({ allowed: true, later: true })
    const { target, states } = recordingTarget()
    shopifyConsent(target)()
    shop.finish()
    shop.choose(true)
    document.dispatchEvent(new Event('shopifyCustomerPrivacyApiLoaded'))
    expect(states).toEqual(['pending'])
  })

  it('an API that throws (loading or reading) leaves the tracker pending and throws nothing into the page', () => {
    const errors: unknown[] = []
    const onError = (event: ErrorEvent) => errors.push(event.error)
    window.addEventListener('error', onError)
    page.Shopify = {
      loadFeatures: () => {
        throw new Error('broken')
      }
    }
    const first = recordingTarget()
    shopifyConsent(first.target)()
    page.Shopify = {
      customerPrivacy: {
        analyticsProcessingAllowed: () => {
          throw new Error('broken')
        }
      }
    }
    const second = recordingTarget()
    const stop = shopifyConsent(second.target)
    document.dispatchEvent(new CustomEvent('visitorConsentCollected', { detail: {} }))
    expect(first.states).toEqual(['pending'])
    expect(second.states).toEqual(['pending'])
    expect(errors).toEqual([])
    window.removeEventListener('error', onError)
    stop()
  })
})
