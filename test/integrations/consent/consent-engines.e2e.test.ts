// @vitest-environment node
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { bundleIife, cycleWithin } from '../../support/bundle'
import { ENGINES, launchEngine, type Engine, type EnginePage } from '../../support/engines'
import { startCollector, startPages, STUB, whenQuiet } from '../../support/harness'
import { tcString } from '../../support/tcf'
import { sleep, waitFor } from '../../support/wait'
import { COOKIEBOT, ONETRUST, SHOPIFY } from './banner-emulations'

/*
 * The issue's three steps for every consent adapter in Chromium, Firefox ESR and WebKitGTK alike,
 * through the driver layer of engines.ts. Each page carries the built script tag (dist/), the
 * adapters bundled from src/ as a shop's bundler would, and its banner: for TCF the IAB's own CMP
 * API, fed TC strings that the IAB's core library encodes here; for OneTrust, Cookiebot and
 * Shopify the emulations of their documented APIs in banner-emulations.ts. The banner is driven
 * only through its own API: gtag('consent', 'update', ...), the CMP's update(), the emulations'
 * load(), accept() and withdraw(). In each engine:
 *   1. before consent, no request reaches the collector, no df_ cookie or df_ localStorage key
 *      exists, and the events tracked meanwhile wait;
 *   2. after consent, the waiting events arrive, each once, with the uid and sid of the cookies;
 *   3. after withdrawal, the cookies and the stored events are gone and nothing more is sent,
 *      not even when the tab is closed.
 */

const adaptersBundle = () =>
  bundleIife(
    `export { googleConsentMode } from '../../../src/integrations/consent/google-consent-mode.ts'
export { tcfConsent } from '../../../src/integrations/consent/tcf.ts'
export { oneTrustConsent } from '../../../src/integrations/consent/onetrust.ts'
export { cookiebotConsent } from '../../../src/integrations/consent/cookiebot.ts'
export { shopifyConsent } from '../../../src/integrations/consent/shopify-privacy.ts'
export { CmpApi } from '@iabtechlabtcf/cmpapi'`,
    // The IAB's cmpapi has import cycles of its own (response/ ↔ command/); ours must have none.
    { from: import.meta.url, name: 'consentAdapters', ignore: cycleWithin('@iabtechlabtcf/') }
  )

let pages: Awaited<ReturnType<typeof startPages>>
let adapters: string

beforeAll(async () => {
  ;[pages, adapters] = await Promise.all([startPages(), adaptersBundle()])
})
afterAll(async () => {
  await pages?.close()
})

const TARGET = `{ consent: (state) => discoveryFeedback('consent', state) }`
const scriptTag = (collector: string) => `<script src="/discovery-feedback.min.js" data-key="KEY" data-endpoint="${collector}"></script>`

/**
 * Google's snippet with a default as CMPs set it, scoped to regions (and counted here wherever the
 * visitor is), then the adapter, then our script tag.
 */
const consentModePage = (collector: string) =>
  `<script>window.dataLayer = window.dataLayer || []; function gtag(){dataLayer.push(arguments)}
gtag('consent', 'default', { analytics_storage: 'denied', ad_storage: 'denied', region: ['DE', 'FR'] })</script>
${STUB}<script>${adapters}</script>
<script>consentAdapters.googleConsentMode(${TARGET})</script>
${scriptTag(collector)}`

/** The adapter before the CMP, which loads a moment later and answers from its first update(). */
const tcfPage = (collector: string) =>
  `${STUB}<script>${adapters}</script>
<script>consentAdapters.tcfConsent(${TARGET})</script>
${scriptTag(collector)}
<script>setTimeout(() => { window.cmpApi = new consentAdapters.CmpApi(10, 1, true) }, 200)</script>`

/**
 * The banner's script first, loading its platform only when the test calls `banner.load()`, as
 * a real one loads a moment later; then the adapter, following it, and our script tag.
 */
const emulatedPage = (banner: string, adapter: string) => (collector: string) =>
  `${STUB}<script>${banner}</script><script>${adapters}</script>
<script>consentAdapters.${adapter}(${TARGET})</script>
${scriptTag(collector)}`

/** A banner of the emulations: it loads undecided, then the shopper accepts, then withdraws. */
const emulated = (banner: string, adapter: string): Banner => ({
  page: emulatedPage(banner, adapter),
  ready: 'banner.load()',
  grant: 'banner.accept()',
  withdraw: 'banner.withdraw()'
})

const gtag = (state: string) => `gtag('consent', 'update', { analytics_storage: '${state}' })`
const cmp = (tc: string, uiVisible: boolean) => `cmpApi.update(${JSON.stringify(tc)}, ${uiVisible})`
// The shopper accepts storage, measurement and more; on withdrawal they reopen the banner and
// keep only storage and ads measurement, so purpose 8, which the adapter requires, goes.
const ACCEPTED = tcString([1, 2, 7, 8, 9, 10])
const WITHDRAWN = tcString([1, 7])

interface Banner {
  page: (collector: string) => string
  /** Runs in the page once it has loaded: the banner shows and waits for an answer. */
  ready?: string
  grant: string
  withdraw: string
}

const BANNERS: [string, Banner][] = [
  [
    'Google Consent Mode',
    {
      page: consentModePage,
      grant: gtag('granted'),
      withdraw: gtag('denied')
    }
  ],
  [
    'IAB TCF v2.2 with the IAB CMP API',
    {
      page: tcfPage,
      // A new visitor: the CMP shows its banner, every consent false.
      ready: `(await new Promise((resolve) => { const wait = () => (window.cmpApi ? resolve() : setTimeout(wait, 20)); wait() }), ${cmp('', true)})`,
      grant: cmp(ACCEPTED, false),
      withdraw: `(${cmp(ACCEPTED, true)}, ${cmp(WITHDRAWN, false)})`
    }
  ],
  ['OneTrust', emulated(ONETRUST, 'oneTrustConsent')],
  ['Cookiebot', emulated(COOKIEBOT, 'cookiebotConsent')],
  ['Shopify customer privacy', emulated(SHOPIFY, 'shopifyConsent')]
]

/** Our cookies by name, as the page sees them: the tracker sets them from script, so none is HttpOnly. */
const COOKIES = `Object.fromEntries(document.cookie.split(/; */).filter((pair) => pair.startsWith('df_')).map((pair) => pair.split('=')))`
/** What of ours the page holds: df_ cookies and df_ localStorage keys, by name. */
const OURS = `({ cookies: Object.keys(${COOKIES}).sort(), storage: Object.keys(localStorage).filter((key) => key.startsWith('df_')).sort() })`
const NOTHING = { cookies: [], storage: [] }

const track = (id: string) => `discoveryFeedback('click-item', { item_id: '${id}', variant_item_id: '${id}' })`
const FLUSH = `discoveryFeedback('flush')`

describe.each(ENGINES)('consent adapters in %s', (name) => {
  let engine: Engine
  let collector: Awaited<ReturnType<typeof startCollector>>
  // Pages a test opened; afterEach closes what a failure left open.
  const opened: EnginePage[] = []

  beforeAll(async () => {
    engine = await launchEngine(name)
  }, 60000)
  afterAll(async () => {
    await engine?.close()
  }, 60000)
  // A collector per test, on its own port, so that a late request of one test is never counted by another.
  beforeEach(async () => {
    collector = await startCollector()
  })
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((page) => page.close().catch(() => {})))
    await collector.close()
  })

  /** Every event the collector received, resends included, as "event" or "click-item:id". */
  const received = () =>
    collector.received().map((event) => event.event + (event.event == 'click-item' ? ':' + (event.properties as { item_id: string }).item_id : ''))

  it.each(BANNERS)(
    '%s: nothing sent or stored before consent; the waiting events once each with the ids after it; after withdrawal nothing sent and our traces gone',
    async (banner, { page: html, ready, grant, withdraw }) => {
      const path = `/${name}/${banner.split(' ')[0]}`
      pages.page(path, html(collector.url))
      const page = await engine.newPage()
      opened.push(page)
      await page.goto(pages.origin + path)
      await page.waitForFunction('window.discoveryFeedback && discoveryFeedback.tracker')
      if (ready) await page.evaluate(ready)

      // 1. Before consent. The wait is longer than the script tag's one-second batching, with a
      // flush asked for and the page's view-page waiting too.
      await page.evaluate(track('before'))
      await page.evaluate(FLUSH)
      await sleep(1500)
      expect(collector.requests).toEqual([])
      expect(await page.evaluate(OURS)).toEqual(NOTHING)

      // 2. Consent through the banner's API.
      const grantedAt = Date.now()
      await page.evaluate(grant)
      await waitFor(() => received().includes('click-item:before'), banner + ': the waiting click at the collector', 10000)
      await page.evaluate(track('granted'))
      await page.evaluate(FLUSH)
      await waitFor(() => received().includes('click-item:granted'), banner + ': the click after consent at the collector', 10000)
      await whenQuiet(() => collector.requests.length, 500)
      // Each event once, the view-page and the click that waited first.
      expect(received()).toEqual(['view-page', 'click-item:before', 'click-item:granted'])
      const cookies = await page.evaluate<Record<string, string>>(COOKIES)
      expect(Object.keys(cookies).sort()).toEqual(['df_sid', 'df_uid'])
      // The waiting events got the shopper's ids at consent, the same as the later one's.
      const users = collector.events().map((event) => [event.user.uid, event.user.sid])
      expect(users).toEqual(Array(3).fill([cookies.df_uid, cookies.df_sid]))
      // The click that waited keeps the time it was tracked, before consent.
      const before = collector.events().find((event) => (event.properties as { item_id?: string }).item_id == 'before')!
      expect(grantedAt - before.t_client).toBeGreaterThanOrEqual(1000)

      // 3. Withdrawal through the banner's API, in the same task as a click that the tracker has
      // stored and not sent yet, so that no batch can leave in between.
      const stored = await page.evaluate<string[]>(`(() => {
        ${track('queued')};
        const stored = Object.keys(localStorage).filter((key) => key.startsWith('df_q_')).map((key) => localStorage.getItem(key));
        ${withdraw};
        return stored;
      })()`)
      expect(stored.filter((text) => text.includes('"queued"'))).toHaveLength(1)
      await page.waitForFunction(`!document.cookie.includes('df_')`)
      expect(await page.evaluate(OURS)).toEqual(NOTHING)
      const requests = collector.requests.length
      await page.evaluate(track('after'))
      await page.evaluate(FLUSH)
      await sleep(1500)
      expect(await page.evaluate(OURS)).toEqual(NOTHING)
      // Closing the tab runs pagehide, which sends what a tracker still holds: nothing, here.
      const { pageErrors } = page
      await page.close()
      await sleep(1000)
      expect(collector.requests).toHaveLength(requests)
      expect(received()).toEqual(['view-page', 'click-item:before', 'click-item:granted'])
      expect(pageErrors).toEqual([])
    },
    60000
  )
})
