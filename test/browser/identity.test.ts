import Cookies from 'js-cookie'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createIdentity } from '../../src/browser/identity'
import { checkUser } from '../../src/shared/rules'
import { blockCookieReads, spyOnCookieWrites } from '../support/cookies'

const options = { key: 'k', endpoint: '/c' }

const clearCookies = () => {
  for (const name of Object.keys(Cookies.get())) Cookies.remove(name, { path: '/' })
}

describe('identity', () => {
  beforeEach(clearCookies)
  afterEach(() => {
    vi.useRealTimers()
    vi.restoreAllMocks()
  })

  it('creates a uid and a sid of at most 32 URL-safe characters and keeps them in cookies', () => {
    const user = createIdentity(options, {}).user(true)
    expect(user.uid).toMatch(/^[\w-]{1,32}$/)
    expect(user.sid).toMatch(/^[\w-]{1,32}$/)
    expect(user.uid).not.toBe(user.sid)
    expect(Cookies.get('df_uid')).toBe(user.uid)
    expect(Cookies.get('df_sid')).toBe(user.sid)
  })

  it("reads the page's cookies once for both ids of an event, and not at all while both are fresh", () => {
    vi.useFakeTimers({ now: new Date('2026-01-01T10:00:00Z') })
    const cookie = Object.getOwnPropertyDescriptor(Document.prototype, 'cookie')!
    const reads = vi.spyOn(cookie, 'get')
    Object.defineProperty(document, 'cookie', { ...cookie, configurable: true })
    try {
      const identity = createIdentity(options, {})
      identity.user(true)
      expect(reads).toHaveBeenCalledTimes(1)
      // Renewed less than a second ago: neither id needs the cookies.
      identity.user(true)
      expect(reads).toHaveBeenCalledTimes(1)
      vi.advanceTimersByTime(2000)
      identity.user(true)
      expect(reads).toHaveBeenCalledTimes(2)
    } finally {
      delete (document as { cookie?: string }).cookie
    }
  })

  it('reuses the identity another page (or tab) left in the cookies', () => {
    const first = createIdentity(options, {}).user(true)
    const second = createIdentity(options, {}).user(true)
    expect(second.uid).toBe(first.uid)
    expect(second.sid).toBe(first.sid)
  })

  it('reads its own cookies among others whose names begin or end like theirs', () => {
    for (const name of ['my_df_uid', 'df_uid_old', 'xdf_sid', 'df_sid2']) Cookies.set(name, 'theirs0000000000000000', { path: '/' })
    Cookies.set('df_uid', 'U1234567890abcdefghij', { path: '/' })
    Cookies.set('df_sid', 'S1234567890abcdefghij', { path: '/' })
    const user = createIdentity(options, {}).user(true)
    expect(user.uid).toBe('U1234567890abcdefghij')
    expect(user.sid).toBe('S1234567890abcdefghij')
  })

  it('keeps the sid while events come, and starts a new one, same uid, after 30 idle minutes', () => {
    vi.useFakeTimers({ now: new Date('2026-01-01T10:00:00Z') })
    const identity = createIdentity(options, {})
    const start = identity.user(true)
    vi.advanceTimersByTime(29 * 60000)
    expect(identity.user(true).sid).toBe(start.sid) // rolls the expiry forward to 10:59
    vi.advanceTimersByTime(29 * 60000)
    expect(identity.user(true).sid).toBe(start.sid)
    vi.advanceTimersByTime(31 * 60000)
    const later = identity.user(true)
    expect(later.sid).not.toBe(start.sid)
    expect(later.uid).toBe(start.uid)
    // A fresh page after the idle time sees the new sid, not a third one.
    expect(createIdentity(options, {}).user(true).sid).toBe(later.sid)
  })

  it('keeps one sid across tabs while any of them is active, and rolls it only after all were idle', () => {
    vi.useFakeTimers({ now: new Date('2026-01-01T10:00:00Z') })
    const tabA = createIdentity(options, {})
    const tabB = createIdentity(options, {})
    const start = tabA.user(true).sid
    // The tabs take turns, each idle for 40 minutes, but the shopper never is.
    for (let i = 0; i < 6; i++) {
      vi.advanceTimersByTime(20 * 60000)
      expect((i % 2 ? tabA : tabB).user(true).sid).toBe(start)
    }
    vi.advanceTimersByTime(31 * 60000)
    expect(tabA.user(true).sid).not.toBe(start)
    expect(tabB.user(true).sid).toBe(tabA.user(true).sid)
  })

  it('writes the sid cookie anew, for the whole session length, on every event more than a second apart', () => {
    // jsdom's cookie jar counts Max-Age from the last read, so reading alone would look like a
    // renewal there; a browser counts it from the write. What the page writes is what rolls.
    vi.useFakeTimers({ now: new Date('2026-01-01T10:00:00Z') })
    const set = spyOnCookieWrites()
    const identity = createIdentity(options, {})
    const sids: string[] = []
    for (const minutes of [0, 10, 29, 29]) {
      vi.advanceTimersByTime(minutes * 60000)
      sids.push(identity.user(true).sid)
    }
    const sidWrites = set.mock.calls.filter(([name]) => name == 'df_sid')
    expect(new Set(sids).size).toBe(1)
    expect(sidWrites.map(([, id, attributes]) => [id, attributes!['max-age']])).toEqual(sids.map((sid) => [sid, '1800']))
    // A burst within a second touches the cookie once.
    set.mockClear()
    identity.user(true)
    expect(set).not.toHaveBeenCalled()
  })

  it.each([
    ['1', 'u'],
    ['32', '9e107d9d372bb6826bd81d3542a419d6']
  ])('keeps a %s-character id that the cookies hold (SPEC "Limits": 1 to 32)', (_, id) => {
    document.cookie = 'df_uid=' + id + '; path=/'
    document.cookie = 'df_sid=' + id + '; path=/'
    const user = createIdentity(options, {}).user(true)
    expect([user.uid, user.sid]).toEqual([id, id])
  })

  it('honours sessionMinutes', () => {
    vi.useFakeTimers({ now: new Date('2026-01-01T10:00:00Z') })
    const identity = createIdentity({ ...options, sessionMinutes: 5 }, {})
    const start = identity.user(true)
    vi.advanceTimersByTime(6 * 60000)
    expect(identity.user(true).sid).not.toBe(start.sid)
  })

  it.each([
    ['empty', ''],
    ['too long', 'x'.repeat(33)],
    ['not URL-safe', 'a b<script>'],
    ['encoded', 'a%3Bb']
  ])('replaces a %s cookie value instead of sending it', (_, value) => {
    document.cookie = 'df_uid=' + value + '; path=/'
    document.cookie = 'df_sid=' + value + '; path=/'
    const user = createIdentity(options, {}).user(true)
    expect(user.uid).toMatch(/^[\w-]{1,32}$/)
    expect(user.sid).toMatch(/^[\w-]{1,32}$/)
    expect(Cookies.get('df_uid')).toBe(user.uid)
  })

  it('keeps ids steady in memory where cookies are blocked', () => {
    blockCookieReads()
    const identity = createIdentity(options, {})
    const first = identity.user(true)
    expect(identity.user(true)).toEqual(first)
  })

  it('writes SameSite=Lax, path=/, a 400-day uid and the session-long sid as Max-Age; Secure only on https', () => {
    vi.useFakeTimers({ now: new Date('2026-01-01T10:00:00Z') })
    const set = spyOnCookieWrites()
    createIdentity({ ...options, cookieDomain: 'localhost' }, {}).user(true)
    const [uidCall, sidCall] = set.mock.calls
    expect(uidCall[0]).toBe('df_uid')
    expect(uidCall[2]).toMatchObject({ path: '/', sameSite: 'Lax', secure: false, domain: 'localhost' })
    // Lifetimes in seconds, counted by the browser from its own clock: 400 days and 30 minutes.
    expect(uidCall[2]).toMatchObject({ 'max-age': '34560000' })
    expect(sidCall[2]).toMatchObject({ 'max-age': '1800' })
    expect(uidCall[2]).not.toHaveProperty('expires')
    set.mockClear()
    createIdentity({ ...options, cookieSecure: true, cookieSameSite: 'Strict' }, {}).user(true)
    expect(set.mock.calls[0][2]).toMatchObject({ secure: true, sameSite: 'Strict' })
  })

  it('lets platform overrides win and fills ua and lang from the browser', () => {
    const user = createIdentity(options, { uid: 'customer-7', sid: 'platform-session', email: 'a@b.c', ip: '203.0.113.9' }).user(true)
    expect(user).toEqual({
      uid: 'customer-7',
      sid: 'platform-session',
      email: 'a@b.c',
      ip: '203.0.113.9',
      ua: navigator.userAgent,
      lang: [...navigator.languages]
    })
    expect(Cookies.get('df_uid')).toBeUndefined()
  })
})

describe('identity without cookies', () => {
  beforeEach(clearCookies)

  it('keeps ids in memory only, for the page, with storage: memory or without consent', () => {
    for (const [identity, store] of [
      [createIdentity({ ...options, storage: 'memory' }, {}), true],
      [createIdentity(options, {}), false]
    ] as const) {
      const first = identity.user(store)
      expect(identity.user(store)).toEqual(first)
      expect(document.cookie).toBe('')
    }
  })

  it('forgets: cookies deleted, a new uid and sid next time', () => {
    const identity = createIdentity(options, {})
    const before = identity.user(true)
    identity.forget()
    expect(document.cookie).toBe('')
    const after = identity.user(true)
    expect(after.uid).not.toBe(before.uid)
    expect(after.sid).not.toBe(before.sid)
  })
})

describe('checkUser', () => {
  it('keeps the SPEC user fields it knows', () => {
    expect(checkUser('identify', { email: 'a@b.c', lang: ['de-CH'], other: 1 })).toEqual({ email: 'a@b.c', lang: ['de-CH'] })
  })

  it.each([
    [{ uid: 'x'.repeat(33) }, 'user.uid must be a string of 1 to 32 characters'],
    [{ sid: 7 }, 'user.sid must be a string of 1 to 32 characters'],
    [{ email: true }, 'user.email must be a string'],
    [{ lang: 'de' }, 'user.lang must be an array of language codes'],
    [null, 'user must be an object']
  ])('refuses %o', (user, rule) => {
    expect(() => checkUser('identify', user)).toThrow('discovery-feedback: identify: ' + rule)
  })
})
