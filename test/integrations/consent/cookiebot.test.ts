import { afterEach, describe, expect, it } from 'vitest'
import { cookiebotConsent } from '../../../src/integrations/consent/cookiebot'
import { recordingTarget } from './banner-target'

const page = window as any

/** Cookiebot as its developer page documents it: Cookiebot.consent, hasResponse, and the window events. */
function fakeCookiebot() {
  const cookiebot = { consent: { necessary: true, preferences: false, statistics: false, marketing: false }, hasResponse: false }
  const raise = (name: string) => window.dispatchEvent(new Event(name))
  return {
    cookiebot,
    /** The script loads: the consent is known, a returning visitor's too. */
    load: () => {
      page.Cookiebot = cookiebot
      raise('CookiebotOnConsentReady')
    },
    accept: (categories: Partial<typeof cookiebot.consent>) => {
      Object.assign(cookiebot.consent, { preferences: false, statistics: false, marketing: false }, categories)
      cookiebot.hasResponse = true
      raise('CookiebotOnAccept')
    },
    decline: () => {
      Object.assign(cookiebot.consent, { preferences: false, statistics: false, marketing: false })
      cookiebot.hasResponse = true
      raise('CookiebotOnDecline')
    }
  }
}

afterEach(() => {
  delete page.Cookiebot
})

describe('cookiebotConsent', () => {
  it('pending at once and while Cookiebot is absent or unanswered; accept grants', () => {
    const { target, states } = recordingTarget()
    const stop = cookiebotConsent(target)
    expect(states).toEqual(['pending'])
    const banner = fakeCookiebot()
    banner.load()
    expect(states).toEqual(['pending'])
    banner.accept({ statistics: true })
    expect(states).toEqual(['pending', 'granted'])
    stop()
  })

  it('Cookiebot loaded before with a returning visitor who accepted: granted at once; withdrawal denies', () => {
    const banner = fakeCookiebot()
    banner.load()
    banner.accept({ statistics: true })
    const { target, states } = recordingTarget()
    const stop = cookiebotConsent(target)
    expect(states).toEqual(['pending', 'granted'])
    banner.decline()
    expect(states).toEqual(['pending', 'granted', 'denied'])
    stop()
  })

  it('accepting other categories only is a decline of statistics', () => {
    const banner = fakeCookiebot()
    const { target, states } = recordingTarget()
    const stop = cookiebotConsent(target)
    banner.load()
    banner.accept({ preferences: true, marketing: true })
    expect(states).toEqual(['pending', 'denied'])
    stop()
  })

  it('the category is an option', () => {
    const banner = fakeCookiebot()
    const { target, states } = recordingTarget()
    const stop = cookiebotConsent(target, { category: 'marketing' })
    banner.load()
    banner.accept({ statistics: true })
    expect(states).toEqual(['pending', 'denied'])
    banner.accept({ marketing: true })
    expect(states).toEqual(['pending', 'denied', 'granted'])
    stop()
  })

  it('stop(): later answers are not followed', () => {
    const banner = fakeCookiebot()
    banner.load()
    const { target, states } = recordingTarget()
    cookiebotConsent(target)()
    banner.accept({ statistics: true })
    banner.decline()
    expect(states).toEqual(['pending'])
  })

  it('properties that throw leave the tracker pending and throw nothing into the page', () => {
    const errors: unknown[] = []
    const onError = (event: ErrorEvent) => errors.push(event.error)
    window.addEventListener('error', onError)
    page.Cookiebot = {
      get consent() {
        throw new Error('broken')
      }
    }
    const { target, states } = recordingTarget()
    const stop = cookiebotConsent(target)
    window.dispatchEvent(new Event('CookiebotOnAccept'))
    expect(states).toEqual(['pending'])
    expect(errors).toEqual([])
    window.removeEventListener('error', onError)
    stop()
  })
})
