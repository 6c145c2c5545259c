import type { BrowserCookie } from '@shopify/web-pixels-extension'
import { nanoid } from 'nanoid'
import { OUR_ID, SID_COOKIE, UID_COOKIE } from '../shared/ids'
import type { ShopifyOptions } from './types'

const MINUTE = 60000
// The storefront tracker's lifetimes (browser/identity.ts): 400 days for the uid, the session
// length for the sid, renewed on activity.
const UID_LIFETIME = 400 * 1440 * MINUTE

/** The page the pixel runs for, as Shopify's event context describes it. */
export interface PixelPage {
  hostname: string
  protocol: string
}

/**
 * The storefront's shopper, seen from a sandbox. The shop's cookies are out of the sandbox's
 * reach except through the Standard API's `browser.cookie`, which runs in the top frame and
 * answers asynchronously, so every read and write here is a promise. The cookies are the
 * storefront tracker's own (df_uid, df_sid), written with its attributes, so the ids the
 * shopper had on the storefront go on in the checkout, and ids first made here go on in the
 * storefront afterwards.
 */
export function createPixelIdentity(cookie: BrowserCookie, options: ShopifyOptions, page: PixelPage) {
  const sessionLength = (options.sessionMinutes || 30) * MINUTE
  let domain: Promise<string | undefined> | undefined
  // The ids as last read or made, and when: a burst of events touches the cookies once.
  let held: { uid: string; sid: string; at: number } | undefined

  const attributes = (at: string | undefined, seconds: number) =>
    '; path=/; max-age=' +
    seconds +
    '; SameSite=' +
    (options.cookieSameSite || 'Lax') +
    ((options.cookieSecure ?? page.protocol == 'https:') ? '; Secure' : '') +
    (at ? '; domain=' + at : '')

  /**
   * The storefront's `cookieDomain: 'auto'`, found the same way: the shortest domain above the
   * page's host that the browser lets a cookie be set on is the site's registrable domain.
   */
  const siteDomain = async () => {
    const labels = page.hostname.split('.')
    for (let candidate = labels.pop(); labels.length;) {
      candidate = labels.pop() + '.' + candidate
      await cookie.set('df_probe=1' + attributes(candidate, 10))
      if ((await cookie.get('df_probe')) == '1') {
        await cookie.set('df_probe=' + attributes(candidate, 0))
        return candidate
      }
    }
  }

  const cookieDomain = () => {
    if (options.cookieDomain != 'auto') return Promise.resolve(options.cookieDomain)
    domain ||= siteDomain()
    return domain
  }

  const write = async (name: string, id: string, lifetime: number) =>
    cookie.set(name + '=' + id + attributes(await cookieDomain(), Math.floor(lifetime / 1000)))

  /** Our id in the cookie `name`, if the cookie holds one (anything else was written by someone else). */
  const read = async (name: string) => {
    const value = await cookie.get(name)
    return value && OUR_ID.test(value) ? value : undefined
  }

  return {
    /**
     * uid and sid for an event: the storefront's, or new ones, written back with a renewed
     * life. Only called with consent: reading the identity cookies needs it too.
     */
    async user(): Promise<{ uid: string; sid: string }> {
      const now = Date.now()
      if (held && now - held.at < 1000) return held
      const uid = (await read(UID_COOKIE)) || held?.uid || nanoid()
      // A sid older than the session is gone from the browser: a new session starts.
      const sid = (await read(SID_COOKIE)) || (held && now - held.at < sessionLength ? held.sid : nanoid())
      held = { uid, sid, at: now }
      await write(UID_COOKIE, uid, UID_LIFETIME)
      await write(SID_COOKIE, sid, sessionLength)
      return held
    },

    /** Consent declined: the ids are deleted, as the storefront tracker's consent('denied') does. Nothing is written where none was. */
    async forget() {
      held = undefined
      for (const name of [UID_COOKIE, SID_COOKIE]) {
        if (await cookie.get(name)) await cookie.set(name + '=' + attributes(await cookieDomain(), 0))
      }
    }
  }
}

export type PixelIdentity = ReturnType<typeof createPixelIdentity>
