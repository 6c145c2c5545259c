import { SID_COOKIE, UID_COOKIE } from '../shared/ids'
import { candidateDomains, createIds } from '../shared/identity'
import type { TrackerOptions } from './types'
import type { User } from '../shared/types'
import { attempt } from '../shared/attempt'

/**
 * The widest domain the browser lets us set a cookie on: the site's registrable domain, so
 * that www.shop.example and checkout.shop.example share one shopper (shared/identity.ts).
 */
export function siteDomain(): string | undefined {
  for (const domain of candidateDomains(location.hostname)) {
    document.cookie = 'df_probe=1; path=/; domain=' + domain
    if (readCookie('df_probe', document.cookie)) {
      document.cookie = 'df_probe=; path=/; max-age=0; domain=' + domain
      return domain
    }
  }
}

/**
 * The value of our cookie `name` in `jar` (the page's cookie string, by default read now), if it
 * is there. The browser joins cookies with '; ' (RFC 6265bis, "The Cookie Header"). A search of
 * the parts rather than a pattern made from the name: V8 compiles each new RegExp on the main
 * thread, at a cost Chromium's profile of a page load shows (bench/load.mjs).
 */
const readCookie = (name: string, jar: string) =>
  jar
    .split('; ')
    .find((cookie) => cookie.startsWith(name + '='))
    ?.slice(name.length + 1)

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
 * Keeps uid and sid in first-party cookies, by the rules of shared/identity.ts, and returns the
 * shopper for each event.
 */
export function createIdentity(options: TrackerOptions, given: Partial<User>): Identity {
  const cookies = options.storage != 'memory'
  let domain = options.cookieDomain
  const ids = createIds(options, location.protocol == 'https:')

  /**
   * Writes one of our cookies for its lifetime; an empty value deletes it. Where document.cookie
   * throws (a sandboxed frame, some webviews), the ids held in memory serve.
   */
  const write = (name: string, id: string) =>
    attempt(() => {
      // Found on first use, not at creation: probing writes cookies, which needs consent too.
      if (domain == 'auto') domain = siteDomain()
      document.cookie = ids.cookie(name, id, domain)
    })

  /**
   * The id of cookie `name`; `store`: may the cookie be read and written. `jar` gives the page's
   * cookies, read at most once for both ids of an event: each read of document.cookie is a
   * synchronous round trip to the browser's cookie store, the largest cost of a page's first
   * event in Chromium's profile (bench/load.mjs).
   */
  const keep = (name: string, store: boolean, jar: () => string): string => {
    let id = ids.recent(name, store)
    if (!id) {
      id = ids.keep(name, store ? readCookie(name, jar()) : undefined, store)
      if (store) write(name, id)
    }
    return id
  }

  // Read once: Chromium builds navigator.userAgent anew on every read, at a cost per event
  // that is a good part of ours.
  const agent = navigator.userAgent
  // Android's WebView has answered an empty navigator.languages (Chromium issue 570349);
  // navigator.language, the most preferred one, is there in every browser.
  const languages = navigator.languages.length ? [...navigator.languages] : [navigator.language]

  return {
    // The site's fields (checked: only SPEC's user fields) win over ours.
    user(store) {
      let jar: string | undefined
      // No cookies where reading them throws.
      const cookieJar = () => (jar ??= attempt(() => document.cookie) ?? '')
      return {
        ...given,
        uid: given.uid || keep(UID_COOKIE, store && cookies, cookieJar),
        sid: given.sid || keep(SID_COOKIE, store && cookies, cookieJar),
        ua: given.ua || agent,
        lang: given.lang || languages
      }
    },
    identify(fields) {
      given = { ...given, ...fields }
    },
    forget(logout) {
      if (logout) {
        const { uid, sid, email, ...rest } = given
        given = rest
      }
      ids.forget()
      write(UID_COOKIE, '')
      write(SID_COOKIE, '')
    }
  }
}
