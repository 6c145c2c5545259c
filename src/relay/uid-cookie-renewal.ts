import { uidFromCookieHeader, uidSetCookie } from '../shared/uid-cookie'
import type { RelayOptions } from './types'

/**
 * Makes the function that renews the uid cookie from the server, so Safari does not cap it at
 * 7 days (docs/reference/privacy.md, "Safari's 7-day cookie cap"). Only a cookie the request
 * carried is renewed: the tracker that wrote it had consent to store it, and a tracker that
 * keeps its ids in memory, or just deleted them (logout, consent withdrawn), sends none.
 */
export function uidCookieRenewal(option: RelayOptions['cookie']) {
  const cookie = option === false ? undefined : option || {}
  /** The Set-Cookie header that renews the request's uid cookie, or none. */
  return (request: Request): Record<string, string> => {
    const uid = uidFromCookieHeader(request.headers.get('cookie'))
    if (!cookie || !uid) return {}
    // Secure where the shopper's connection is https, also when a proxy in front ended TLS (a
    // forged header would only make the shopper's own browser refuse the cookie).
    const secure = cookie.secure ?? (new URL(request.url).protocol == 'https:' || request.headers.get('x-forwarded-proto') == 'https')
    return { 'set-cookie': uidSetCookie(uid, { domain: cookie.domain, secure, days: cookie.days }) }
  }
}
