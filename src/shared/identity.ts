import { randomId } from './random-id'
import { OUR_ID, UID_COOKIE } from './ids'

/*
 * The shopper's ids as both page-side products keep them, the storefront tracker in the page's
 * cookies and the Shopify pixel through the Standard API's asynchronous `browser.cookie`: the
 * same cookies (df_uid, df_sid, shared/ids.ts), the same lifetimes and the same rules, so that
 * ids made by one go on in the other. Each product reads and writes the cookies its own way.
 */

const MINUTE = 60000
// Browsers cap cookie lifetimes at 400 days (RFC 6265bis, "The Max-Age Attribute"); asking for
// more is silently cut, so we ask for exactly that and renew it on activity.
const UID_LIFETIME = 400 * 1440 * MINUTE

/** The cookie options both products take. */
export interface IdentityOptions {
  /** Minutes without an event after which a new sid starts. Default 30. */
  sessionMinutes?: number
  cookieDomain?: string
  cookieSecure?: boolean
  cookieSameSite?: 'Lax' | 'Strict' | 'None'
}

/**
 * The domains a cookie of `hostname` may be set on, from the shortest (the last two labels) up
 * to the host itself. Browsers refuse public suffixes (co.uk, github.io), so the first that
 * takes a cookie is the site's registrable domain, found without a suffix list.
 */
export const candidateDomains = (hostname: string) => {
  const labels = hostname.split('.')
  return labels.slice(1).map((_, index) => labels.slice(-2 - index).join('.'))
}

/**
 * Keeps the shopper's ids, by cookie name. Every use counts as activity: an id is renewed for
 * its lifetime, the uid's 400 days or the session's length, so after that long without events
 * the browser drops the sid's cookie and a new session starts, shared by every tab. The ids
 * last read or made are held too, with the same expiry: where cookies are blocked or not
 * allowed, they keep the ids steady for this page.
 */
export function createIds(options: IdentityOptions, https: boolean) {
  const sessionLength = (options.sessionMinutes || 30) * MINUTE
  let held: Record<string, { id: string; expires: number; stored: boolean }> = {}
  const lifetime = (name: string) => (name == UID_COOKIE ? UID_LIFETIME : sessionLength)

  return {
    /**
     * One of our cookies as `document.cookie` and the Standard API's `browser.cookie.set` take
     * it: an id lasts its lifetime, an empty value deletes the cookie, unless `ms` says how long
     * it lasts. Max-Age rather than Expires: the browser counts it from its own clock (RFC
     * 6265bis §5.6.2), so a device whose date is years behind does not write an expiry in the
     * past, which would drop the ids at once and make every page a new shopper. Secure by
     * default on https pages; on `domain`, or the page's host only.
     */
    cookie: (name: string, value: string, domain?: string, ms = value ? lifetime(name) : 0) =>
      name +
      '=' +
      value +
      '; path=/; max-age=' +
      Math.floor(ms / 1000) +
      '; SameSite=' +
      (options.cookieSameSite || 'Lax') +
      ((options.cookieSecure ?? https) ? '; Secure' : '') +
      (domain ? '; domain=' + domain : ''),
    /**
     * The id held for `name` if it was renewed within the last second, from cookies or not as
     * `stored` says: reading and writing cookies costs more than the rest of a tracked event,
     * and within a second the cookie can only be a second fresher, so a burst touches it once.
     */
    recent(name: string, stored: boolean): string | undefined {
      const id = held[name]
      if (id && id.stored == stored && id.expires - lifetime(name) + 1000 > Date.now()) return id.id
    },
    /**
     * The id for `name`, renewed from now: the cookie's (`found`) if it is one of ours, else the
     * one held while its life lasts, else a new one. Anything else in our cookie was written by
     * someone else and is replaced, never sent.
     */
    keep(name: string, found: string | null | undefined, stored: boolean): string {
      const now = Date.now()
      const last = held[name]
      const id = found && OUR_ID.test(found) ? found : last && last.expires > now ? last.id : randomId()
      held[name] = { id, expires: now + lifetime(name), stored }
      return id
    },
    /** The next use starts new ids. */
    forget() {
      held = {}
    }
  }
}
