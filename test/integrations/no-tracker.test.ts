import { afterEach, describe, expect, it, vi } from 'vitest'
import { cookiebotConsent, googleConsentMode, oneTrustConsent, shopifyConsent, tcfConsent, trackDeclarative } from '../../src/index'
import { quietConsole } from '../support/console'

// An entry function given no tracker (a script-tag page that read `discoveryFeedback.tracker`
// before the tag had loaded, a variable left undefined) says so, naming itself, instead of
// following a banner or a page for nothing.

afterEach(() => vi.restoreAllMocks())

const entries = [
  ['googleConsentMode', googleConsentMode, 'consent'],
  ['tcfConsent', tcfConsent, 'consent'],
  ['oneTrustConsent', oneTrustConsent, 'consent'],
  ['cookiebotConsent', cookiebotConsent, 'consent'],
  ['shopifyConsent', shopifyConsent, 'consent'],
  ['trackDeclarative', trackDeclarative, 'track']
] as const

describe('an entry function given no tracker', () => {
  it.each(entries)('%s(undefined) says so in the console, and returns a stop that does nothing', (name, entry, method) => {
    const errors = quietConsole('error')
    const stop = (entry as (tracker: unknown) => () => void)(undefined)
    expect(errors.mock.calls).toEqual([[`discovery-feedback: ${name}: tracker must be a tracker, or an object with its ${method}(), got undefined`]])
    expect(() => stop()).not.toThrow()
  })

  it.each(entries)('%s says nothing when given a target with its method', (_name, entry, method) => {
    const errors = quietConsole('error')
    const stop = (entry as (tracker: unknown) => () => void)({ [method]: () => {} })
    stop()
    expect(errors).not.toHaveBeenCalled()
  })
})
