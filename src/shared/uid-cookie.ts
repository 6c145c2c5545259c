import { OUR_ID, UID_COOKIE } from './ids'

/*
 * The uid cookie as a shop's server renews it: what both server-side writers share, the Node
 * helper identityCookie() (server/identity-cookie.ts) and the relay's answers (relay/uid-cookie-renewal.ts).
 */

/**
 * The uid a Cookie header carries, if it is one of ours. Anything but a string (a header array,
 * a number) counts as no cookie, and so does a value that is cut short or not of our alphabet.
 */
export function uidFromCookieHeader(header: unknown): string | undefined {
  for (const part of (typeof header == 'string' ? header : '').split(';')) {
    const [name, ...value] = part.trim().split('=')
    if (name != UID_COOKIE) continue
    let uid: string
    try {
      uid = decodeURIComponent(value.join('='))
    } catch {
      return undefined
    }
    return OUR_ID.test(uid) ? uid : undefined
  }
}

/** Where and how long the renewed uid cookie lives. */
export interface UidCookieAttributes {
  domain?: string
  secure: boolean
  /** Browsers keep a cookie 400 days at most (RFC 6265bis), so more is cut to that. Default 400. */
  days?: number
}

/**
 * The Set-Cookie header that renews `uid` from the server, with the storefront tracker's
 * attributes. Not HttpOnly: the tracker in the page reads it as its own.
 */
export const uidSetCookie = (uid: string, { domain, secure, days }: UidCookieAttributes) =>
  `${UID_COOKIE}=${uid}; Path=/; Max-Age=${Math.min(days || 400, 400) * 86400}; SameSite=Lax` +
  (domain ? '; Domain=' + domain : '') +
  (secure ? '; Secure' : '')
