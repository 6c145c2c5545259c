// @vitest-environment jsdom
// @vitest-environment-options { "url": "https://www.shop.example.co.uk/p/1" }
import Cookies from 'js-cookie'
import { describe, expect, it } from 'vitest'
import { createIdentity, siteDomain } from '../../src/browser/identity'

describe('cookieDomain: auto', () => {
  it('finds the registrable domain, never the public suffix', () => {
    // jsdom's cookie jar refuses public suffixes (co.uk) as browsers do.
    expect(siteDomain()).toBe('example.co.uk')
    expect(Cookies.get('df_probe')).toBeUndefined()
  })

  it('writes the identity cookies on it, so every subdomain shares the shopper', () => {
    const set: unknown[] = []
    const original = Cookies.set
    Cookies.set = ((...args: Parameters<typeof Cookies.set>) => {
      set.push(args[2]!.domain)
      return original(...args)
    }) as typeof Cookies.set
    createIdentity({ key: 'k', endpoint: '/c', cookieDomain: 'auto' }, {}).user(true)
    Cookies.set = original
    expect(set.filter((domain) => domain == 'example.co.uk').length).toBeGreaterThanOrEqual(2)
  })
})
