import Cookies from 'js-cookie'
import { nanoid } from 'nanoid'
import { OUR_ID, SID_COOKIE, UID_COOKIE } from '../shared/ids'
import type { TrackerOptions } from './types'
import type { User } from '../shared/types'
import { attempt } from '../shared/attempt'

const MINUTE = 60000
// Browsers cap cookie lifetimes at 400 days (RFC 6265bis, "The Max-Age Attribute"); asking for
// more is silently cut, so we ask for exactly that and renew it on activity.
const UID_LIFETIME = 400 * 1440 * MINUTE

/**
 * The widest domain the browser lets us set a cookie on: the site's registrable domain, so
 * that www.shop.example and checkout.shop.example share one shopper. Browsers refuse public
 * suffixes (co.uk, github.io), so trying from the shortest candidate up finds it without a
 * suffix list.
 */
export function siteDomain(): string | undefined {
  const labels = location.hostname.split('.')
  // From the last two labels up, one label more each time.
  for (let domain = labels.pop(); labels.length;) {
    domain = labels.pop() + '.' + domain
    // path=/ is js-cookie's default.
    Cookies.set('df_probe', '1', { domain, sameSite: 'Lax' })
    if (Cookies.get('df_probe')) {
      Cookies.remove('df_probe', { domain })
      return domain
    }
  }
}

export interface Identity {
  /** The shopper for an event. `store`: may cookies be read and written (consent, storage mode). */
  user(store: boolean): User
  /** Adds fields the site knows (identify()), checked against SPEC "User object" already. */
  identify(fields: Partial<User>): void
  /**
   * Deletes the ids, cookies included; the next event starts a new uid and sid. `logout`: the
   * uid, sid and email the site gave go too.
   */
  forget(logout?: boolean): void
}

/**
 * Keeps uid and sid in first-party cookies and returns the shopper for each event.
 * Every call counts as activity: the sid cookie's expiry rolls forward by the session
 * length, so after that long without events the browser drops it and a new sid starts,
 * shared by every tab through the cookie.
 */
export function createIdentity(options: TrackerOptions, given: Partial<User>): Identity {
  const cookies = options.storage != 'memory'
  let domain = options.cookieDomain
  const sessionLength = (options.sessionMinutes || 30) * MINUTE
  // The ids as last read or made, by cookie name: where cookies are blocked or not allowed,
  // memory keeps them steady for this page, with the same expiry.
  const memory: Record<string, { id: string; expires: number; stored: boolean }> = {}

  /**
   * Writes one of our cookies to last `lifetime` ms; an empty value with no lifetime deletes it.
   * Max-Age rather than Expires: the browser counts it from its own clock (RFC 6265bis §5.6.2),
   * so a device whose date is years behind does not write an expiry in the past, which would
   * drop the ids at once and make every page a new shopper. Where document.cookie throws (a
   * sandboxed frame, some webviews), memory keeps the ids.
   */
  const write = (name: string, id: string, lifetime: number) =>
    attempt(() => {
      // Found on first use, not at creation: probing writes cookies, which needs consent too.
      if (domain == 'auto') domain = siteDomain()
      Cookies.set(name, id, {
        path: '/',
        sameSite: options.cookieSameSite || 'Lax',
        secure: options.cookieSecure ?? location.protocol == 'https:',
        domain,
        // A string: js-cookie leaves out an attribute whose value is falsy, such as 0.
        'max-age': String(Math.floor(lifetime / 1000))
      })
    })

  const keep = (name: string, lifetime: number, store: boolean): string => {
    const now = Date.now()
    const held = memory[name]
    // Reading and writing document.cookie costs more than the rest of a tracked click; within
    // a second of the last renewal the cookie can only be a second fresher, so a burst of
    // events touches it once.
    if (held && held.stored == store && held.expires - lifetime + 1000 > now) return held.id
    let id = store ? attempt(() => Cookies.get(name)) : undefined
    if (!id || !OUR_ID.test(id)) id = held && held.expires > now ? held.id : nanoid()
    memory[name] = { id, expires: now + lifetime, stored: store }
    if (store) write(name, id, lifetime)
    return id
  }

  // Read once: Chromium builds navigator.userAgent anew on every read, at a cost per event
  // that is a good part of ours.
  const agent = navigator.userAgent
  const languages = (navigator.languages?.length ? navigator.languages : [navigator.language]).filter(Boolean)

  return {
    // The site's fields (checked: only SPEC's user fields) win over ours.
    user: (store) => ({
      ...given,
      uid: given.uid || keep(UID_COOKIE, UID_LIFETIME, store && cookies),
      sid: given.sid || keep(SID_COOKIE, sessionLength, store && cookies),
      ua: given.ua || agent,
      lang: given.lang || languages
    }),
    identify(fields) {
      given = { ...given, ...fields }
    },
    forget(logout) {
      if (logout) {
        const { uid, sid, email, ...rest } = given
        given = rest
      }
      for (const name of [UID_COOKIE, SID_COOKIE]) {
        delete memory[name]
        write(name, '', 0)
      }
    }
  }
}
