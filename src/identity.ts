import Cookies from 'js-cookie'
import { nanoid } from 'nanoid'
import { feedbackError } from './error'
import type { TrackerOptions, User } from './types'

const UID_COOKIE = 'df_uid'
const SID_COOKIE = 'df_sid'
const MINUTE = 60000
// Browsers cap cookie lifetimes at 400 days (RFC 6265bis, "The Expires Attribute"); asking for
// more is silently cut, so we ask for exactly that and renew it on activity.
const UID_LIFETIME = 400 * 1440 * MINUTE

// nanoid's alphabet, at most 32 characters (SPEC "Limits"). Anything else in our cookie was
// written by someone else and is replaced, never sent.
const OUR_ID = /^[\w-]{1,32}$/

/** A valid override from the platform: any non-empty string of at most 32 characters (SPEC "User object"). */
export const isUserId = (value: unknown): value is string =>
  typeof value == 'string' && value.length > 0 && value.length <= 32

/**
 * Keeps uid and sid in first-party cookies and returns the shopper for each event.
 * Every call counts as activity: the sid cookie's expiry rolls forward by the session
 * length, so after that long without events the browser drops it and a new sid starts,
 * shared by every tab through the cookie.
 */
export function createIdentity(options: TrackerOptions): (overrides: Partial<User>) => User {
  const attributes: Cookies.CookieAttributes = {
    path: '/',
    domain: options.cookieDomain,
    sameSite: options.cookieSameSite || 'Lax',
    secure: options.cookieSecure ?? location.protocol == 'https:'
  }
  const sessionLength = (options.sessionMinutes || 30) * MINUTE
  // Where cookies are blocked, memory keeps the ids steady for this page, with the same expiry.
  const memory: Record<string, [id: string, expires: number]> = {}

  const keep = (name: string, lifetime: number): string => {
    const now = Date.now()
    const held = memory[name]
    let id = Cookies.get(name)
    if (!id || !OUR_ID.test(id)) id = held && held[1] > now ? held[0] : nanoid()
    memory[name] = [id, now + lifetime]
    Cookies.set(name, id, { ...attributes, expires: new Date(now + lifetime) })
    return id
  }

  const navigatorLanguages = navigator.languages && navigator.languages.length ? navigator.languages : [navigator.language]

  return (overrides) => ({
    uid: overrides.uid || keep(UID_COOKIE, UID_LIFETIME),
    sid: overrides.sid || keep(SID_COOKIE, sessionLength),
    ...(overrides.email ? { email: overrides.email } : {}),
    ...(overrides.ip ? { ip: overrides.ip } : {}),
    ua: overrides.ua || navigator.userAgent,
    lang: overrides.lang || navigatorLanguages.filter(Boolean)
  })
}

const isString = (value: unknown): value is string => typeof value == 'string'
const ID_RULE: [(value: unknown) => boolean, string] = [isUserId, 'must be a string of 1 to 32 characters']
const TEXT_RULE: [(value: unknown) => boolean, string] = [isString, 'must be a string']

const USER_RULES: Record<string, [test: (value: unknown) => boolean, rule: string]> = {
  uid: ID_RULE,
  sid: ID_RULE,
  email: TEXT_RULE,
  ip: TEXT_RULE,
  ua: TEXT_RULE,
  lang: [(value) => Array.isArray(value) && value.every(isString), 'must be an array of language codes']
}

/** Checks identity fields given by the site (options.user, identify()) against SPEC "User object". */
export function checkUser(event: string, user: unknown): Partial<User> {
  if (!user || typeof user != 'object') throw feedbackError(event, 'user', 'must be an object')
  const checked: Record<string, unknown> = {}
  for (const field in USER_RULES) {
    const value = (user as Record<string, unknown>)[field]
    if (value == null) continue
    const [test, rule] = USER_RULES[field]
    if (!test(value)) throw feedbackError(event, 'user.' + field, rule)
    checked[field] = value
  }
  return checked as Partial<User>
}
