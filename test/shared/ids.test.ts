import { describe, expect, it } from 'vitest'
import { OUR_ID } from '../../src/shared/ids'
import { uidFromCookieHeader } from '../../src/shared/uid-cookie'

// SPEC "Limits": a uid or sid is 1 to 32 characters. OUR_ID is that bound for the ids found in
// our cookies, shared by the browser tracker, the Shopify pixel and the shop's server.
describe('OUR_ID, the ids our cookies may hold', () => {
  const longest = 'V1StGXR8_Z5jdHi6B-myT0123456789a'

  it('takes ids of exactly 1 and exactly 32 URL-safe characters', () => {
    expect(longest).toHaveLength(32)
    expect(OUR_ID.test('a')).toBe(true)
    expect(OUR_ID.test(longest)).toBe(true)
    // An MD5 in hex, as a shop's server may set the uid itself.
    expect(OUR_ID.test('9e107d9d372bb6826bd81d3542a419d6')).toBe(true)
  })

  it('refuses 33 characters, none, and characters outside the alphabet', () => {
    for (const id of [longest + 'b', '', 'a b', 'a;b', 'ä']) expect(OUR_ID.test(id)).toBe(false)
  })

  it("keeps a 32-character uid from the shop's Cookie header, and replaces a 33-character one", () => {
    expect(uidFromCookieHeader('df_uid=' + longest)).toBe(longest)
    expect(uidFromCookieHeader('theme=dark; df_uid=a')).toBe('a')
    expect(uidFromCookieHeader('df_uid=' + longest + 'b')).toBeUndefined()
  })
})
