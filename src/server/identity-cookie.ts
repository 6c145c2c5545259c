import { nanoid } from 'nanoid'
import { OUR_ID, UID_COOKIE } from '../shared/ids'

/** Settings of the identity cookie a shop's server writes. */
export interface IdentityCookieOptions {
  /** Cookie domain, e.g. `'shop.example'` to share it with subdomains; as `cookieDomain` in the browser. */
  domain?: string
  /** Send it with `Secure`. Default true; turn off only for plain-http development. */
  secure?: boolean
  /** Lifetime in days; browsers keep at most 400. Default 400. */
  days?: number
}

function readCookie(header: unknown, name: string): string | undefined {
  // Anything but a string (a header array, a number) counts as no cookie.
  for (const part of (typeof header == 'string' ? header : '').split(';')) {
    const [key, ...value] = part.trim().split('=')
    if (key == name) {
      try {
        return decodeURIComponent(value.join('='))
      } catch {
        return undefined
      }
    }
  }
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
 */
export function identityCookie(cookieHeader: unknown, options: IdentityCookieOptions = {}): { uid: string; setCookie: string } {
  const found = readCookie(cookieHeader, UID_COOKIE)
  const uid = found && OUR_ID.test(found) ? found : nanoid()
  const days = Math.min(options.days || 400, 400)
  const setCookie =
    `${UID_COOKIE}=${uid}; Path=/; Max-Age=${days * 86400}; SameSite=Lax` +
    (options.domain ? '; Domain=' + options.domain : '') +
    (options.secure === false ? '' : '; Secure')
  return { uid, setCookie }
}
