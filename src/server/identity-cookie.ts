import { nanoid } from 'nanoid'
import { uidFromCookieHeader, uidSetCookie } from '../shared/uid-cookie'

/** Settings of the identity cookie a shop's server writes. */
export interface IdentityCookieOptions {
  /** Cookie domain, e.g. `'shop.example'` to share it with subdomains; as `cookieDomain` in the browser. */
  domain?: string
  /** Send it with `Secure`. Default true; turn off only for plain-http development. */
  secure?: boolean
  /** Lifetime in days; browsers keep at most 400. Default 400. */
  days?: number
}

/**
 * Safari's tracking prevention (ITP) caps cookies written by script at 7 days, so a shopper
 * who comes back after a week looks new. A cookie set by the site's own server in an HTTP
 * response is not capped. Call this on page responses and send its `setCookie` as a
 * `Set-Cookie` header: it keeps the uid the browser already has (or makes one) and renews it
 * for `days`. It is not HttpOnly, so the tracker in the page reads it as its own.
 *
 * @example
 * const { setCookie } = identityCookie(request.headers.cookie)
 * response.setHeader('Set-Cookie', setCookie)
 * @param cookieHeader - The request's `Cookie` header, as Node gives it (a string, or undefined).
 * @param options - How long the cookie lasts, and its domain and attributes.
 */
export function identityCookie(cookieHeader: unknown, options: IdentityCookieOptions = {}): { uid: string; setCookie: string } {
  const uid = uidFromCookieHeader(cookieHeader) || nanoid()
  const setCookie = uidSetCookie(uid, { domain: options.domain, secure: options.secure !== false, days: options.days })
  return { uid, setCookie }
}
