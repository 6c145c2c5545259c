import type { BrowserCookie } from '@shopify/web-pixels-extension'
import { SID_COOKIE, UID_COOKIE } from '../shared/ids'
import { candidateDomains, createIds } from '../shared/identity'
import type { ShopifyOptions } from './types'

/** The page the pixel runs for, as Shopify's init context describes it. */
export interface PixelPage {
  hostname: string
  protocol: string
}

/**
 * The storefront's shopper, seen from a sandbox. The shop's cookies are out of the sandbox's
 * reach except through the Standard API's `browser.cookie`, which runs in the top frame and
 * answers asynchronously, so every read and write here is a promise. The cookies, their
 * attributes and the rules are the storefront tracker's own (shared/identity.ts), so the ids the
 * shopper had on the storefront go on in the checkout, and ids first made here go on in the
 * storefront afterwards. Where the cookie API fails, the ids last for this page, in memory, as
 * the storefront tracker's do where cookies are blocked.
 */
export function createPixelIdentity(cookie: BrowserCookie, options: ShopifyOptions, page: PixelPage) {
  const ids = createIds(options, page.protocol == 'https:')
  let siteDomain: string | undefined

  /**
   * The storefront's `cookieDomain: 'auto'`, found the same way: the shortest domain above the
   * page's host that the browser lets a cookie be set on is the site's registrable domain.
   * Found on first use, which needs consent, since probing writes a cookie.
   */
  const cookieDomain = async () => {
    if (options.cookieDomain != 'auto') return options.cookieDomain
    if (siteDomain) return siteDomain
    for (const candidate of candidateDomains(page.hostname)) {
      await cookie.set(ids.cookie('df_probe', '1', candidate, 10000))
      if ((await cookie.get('df_probe')) == '1') {
        await cookie.set(ids.cookie('df_probe', '', candidate))
        siteDomain = candidate
        return candidate
      }
    }
  }

  return {
    /**
     * uid and sid for an event: the storefront's, or new ones, written back with a renewed
     * life. Only called with consent: reading the identity cookies needs it too.
     */
    async user(): Promise<{ uid: string; sid: string }> {
      const uid = ids.recent(UID_COOKIE, true)
      const sid = ids.recent(SID_COOKIE, true)
      if (uid && sid) return { uid, sid }
      try {
        const user = { uid: ids.keep(UID_COOKIE, await cookie.get(UID_COOKIE), true), sid: ids.keep(SID_COOKIE, await cookie.get(SID_COOKIE), true) }
        const domain = await cookieDomain()
        await cookie.set(ids.cookie(UID_COOKIE, user.uid, domain))
        await cookie.set(ids.cookie(SID_COOKIE, user.sid, domain))
        return user
      } catch {
        // The top frame did not answer (blocked cookies, a page going away): this page's ids.
        return { uid: ids.keep(UID_COOKIE, undefined, false), sid: ids.keep(SID_COOKIE, undefined, false) }
      }
    },

    /**
     * Consent declined: our ids are deleted, as the storefront tracker's consent('denied') does.
     * Only cookies that exist are deleted, on every domain they may have been set on, so
     * nothing is written for a shopper who has none, and no domain is probed.
     */
    async forget() {
      ids.forget()
      const domains = [undefined, ...candidateDomains(page.hostname)]
      for (const name of [UID_COOKIE, SID_COOKIE]) {
        if (await cookie.get(name)) for (const domain of domains) await cookie.set(ids.cookie(name, '', domain))
      }
    }
  }
}

export type PixelIdentity = ReturnType<typeof createPixelIdentity>
