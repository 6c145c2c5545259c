// @vitest-environment node
import { execFileSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { identityCookie } from '../src/server'

describe('identityCookie (discovery-feedback/server)', () => {
  it('renews the uid the browser already has, for 400 days, SameSite=Lax, Secure, readable by the page', () => {
    const { uid, setCookie } = identityCookie('theme=dark; df_uid=V1StGXR8_Z5jdHi6B-myT; df_sid=abc')
    expect(uid).toBe('V1StGXR8_Z5jdHi6B-myT')
    expect(setCookie).toBe('df_uid=V1StGXR8_Z5jdHi6B-myT; Path=/; Max-Age=34560000; SameSite=Lax; Secure')
    expect(setCookie).not.toMatch(/HttpOnly/i)
  })

  it.each([undefined, '', 'df_uid=', 'df_uid=' + 'x'.repeat(33), 'df_uid=a%20b', 'df_uid=%E0%A4%A'])('makes a new uid for %o', (header) => {
    const { uid, setCookie } = identityCookie(header)
    expect(uid).toMatch(/^[\w-]{21}$/)
    expect(setCookie.startsWith('df_uid=' + uid + ';')).toBe(true)
  })

  it('takes a domain, a shorter life and plain http for development', () => {
    expect(identityCookie('df_uid=abc', { domain: 'shop.example', days: 30, secure: false }).setCookie).toBe(
      'df_uid=abc; Path=/; Max-Age=2592000; SameSite=Lax; Domain=shop.example'
    )
    expect(identityCookie('df_uid=abc', { days: 1000 }).setCookie).toContain('Max-Age=34560000')
  })

  it('loads in plain Node by its export name', () => {
    const out = execFileSync(
      process.execPath,
      ['--input-type=module', '-e', "import { identityCookie } from 'discovery-feedback/server'; console.log(identityCookie('df_uid=abc').uid)"],
      { encoding: 'utf8' }
    )
    expect(out.trim()).toBe('abc')
    const cjs = execFileSync(process.execPath, ['-e', "console.log(require('discovery-feedback/server').identityCookie('df_uid=abc').uid)"], {
      encoding: 'utf8'
    })
    expect(cjs.trim()).toBe('abc')
  })
})
