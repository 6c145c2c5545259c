// @vitest-environment jsdom
// @vitest-environment-options { "url": "https://www.shop.example.co.uk/p/1" }
import Cookies from 'js-cookie'
import { describe, expect, it, vi } from 'vitest'
import { createIdentity, siteDomain } from '../../src/browser/identity'
import { spyOnCookieWrites } from '../support/cookies'

describe('cookieDomain: auto', () => {
  it('finds the registrable domain, never the public suffix', () => {
    // jsdom's cookie jar refuses public suffixes (co.uk) as browsers do.
    expect(siteDomain()).toBe('example.co.uk')
    expect(Cookies.get('df_probe')).toBeUndefined()
  })

  it('writes the identity cookies on it, so every subdomain shares the shopper', () => {
    const writes = spyOnCookieWrites()
    createIdentity({ key: 'k', endpoint: '/c', cookieDomain: 'auto' }, {}).user(true)
    // The identity cookies' writes, not the probe's.
    const set = writes.mock.calls.filter(([name]) => name != 'df_probe').map(([, , attributes]) => attributes.domain)
    vi.restoreAllMocks()
    expect(set.filter((domain) => domain == 'example.co.uk').length).toBeGreaterThanOrEqual(2)
  })
})
