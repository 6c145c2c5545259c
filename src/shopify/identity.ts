import type { BrowserCookie } from '@shopify/web-pixels-extension'
import { nanoid } from 'nanoid'
import { OUR_ID, SID_COOKIE, UID_COOKIE } from '../shared/ids'
import type { ShopifyOptions } from './types'

const MINUTE = 60000
// The storefront tracker's lifetimes (browser/identity.ts): 400 days for the uid, the session
// length for the sid, renewed on activity.
const UID_LIFETIME = 400 * 1440 * MINUTE

/** The page the pixel runs for, as Shopify's init context describes it. */
export interface PixelPage {
  hostname: string
  protocol: string
}

/** The domains a cookie of this host may be set on, from the shortest (the last two labels) to the host itself. */
const candidateDomains = (hostname: string) => {
  const labels = hostname.split('.')
  return labels.slice(0, -1).map((_, index) => labels.slice(labels.length - 2 - index).join('.'))
}

/**
 * The storefront's shopper, seen from a sandbox. The shop's cookies are out of the sandbox's
 * reach except through the Standard API's `browser.cookie`, which runs in the top frame and
 * answers asynchronously, so every read and write here is a promise. The cookies are the
 * storefront tracker's own (df_uid, df_sid), written with its attributes, so the ids the
 * shopper had on the storefront go on in the checkout, and ids first made here go on in the
 * storefront afterwards. Where the cookie API fails, the ids last for this page, in memory, as
 * the storefront tracker's do where cookies are blocked.
 */
export function createPixelIdentity(cookie: BrowserCookie, options: ShopifyOptions, page: PixelPage) {
  const sessionLength = (options.sessionMinutes || 30) * MINUTE
  let siteDomain: string | undefined
  // The ids as last read or made, and when: a burst of events touches the cookies once.
  let held: { uid: string; sid: string; at: number } | undefined

  const attributes = (domain: string | undefined, seconds: number) =>
    '; path=/; max-age=' +
    Math.floor(seconds) +
    '; SameSite=' +
    (options.cookieSameSite || 'Lax') +
    ((options.cookieSecure ?? page.protocol == 'https:') ? '; Secure' : '') +
    (domain ? '; domain=' + domain : '')

  /**
   * The storefront's `cookieDomain: 'auto'`, found the same way: the shortest domain above the
   * page's host that the browser lets a cookie be set on is the site's registrable domain.
   * Found on first use, which needs consent, since probing writes a cookie.
   */
  const cookieDomain = async () => {
    if (options.cookieDomain != 'auto') return options.cookieDomain
    if (siteDomain) return siteDomain
    for (const candidate of candidateDomains(page.hostname)) {
      await cookie.set('df_probe=1' + attributes(candidate, 10))
      if ((await cookie.get('df_probe')) == '1') {
        await cookie.set('df_probe=' + attributes(candidate, 0))
        siteDomain = candidate
        return candidate
      }
    }
  }

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
      // A sid older than the session is gone: a new session starts.
      const fresh = held && now - held.at < sessionLength ? held : undefined
      try {
        const uid = (await read(UID_COOKIE)) || held?.uid || nanoid()
        const sid = (await read(SID_COOKIE)) || fresh?.sid || nanoid()
        held = { uid, sid, at: now }
        const domain = await cookieDomain()
        await cookie.set(UID_COOKIE + '=' + uid + attributes(domain, UID_LIFETIME / 1000))
        await cookie.set(SID_COOKIE + '=' + sid + attributes(domain, sessionLength / 1000))
      } catch {
        // The top frame did not answer (blocked cookies, a page going away): this page's ids.
        held = { uid: held?.uid || nanoid(), sid: fresh?.sid || nanoid(), at: now }
      }
      return held
    },

    /**
     * Consent declined: our ids are deleted, as the storefront tracker's consent('denied') does.
     * Only cookies that exist are deleted, on every domain they may have been set on, so
     * nothing is written for a shopper who has none, and no domain is probed.
     */
    async forget() {
      held = undefined
      const domains = [undefined, ...candidateDomains(page.hostname)]
      for (const name of [UID_COOKIE, SID_COOKIE]) {
        if (await cookie.get(name)) for (const domain of domains) await cookie.set(name + '=' + attributes(domain, 0))
      }
    }
  }
}

export type PixelIdentity = ReturnType<typeof createPixelIdentity>
