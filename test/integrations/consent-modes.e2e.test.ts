// @vitest-environment node
import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { bundleIife, cycleWithin } from '../support/bundle'
import { chromiumSuite, STUB, watch, whenQuiet } from '../support/harness'
import { tcString } from '../support/tcf'
import { sleep, waitFor } from '../support/wait'

/*
 * The three steps for Google Consent Mode and IAB TCF v2.2, in real Chromium: the
 * script tag (dist/, run `npx rollup -c` first), the adapters bundled from src/ as a shop's
 * bundler would, and for TCF the IAB's own CMP API in the page, fed TC strings that the IAB's
 * core library encodes here. Each page: nothing sent or stored until consent; the waiting events
 * sent after it; after withdrawal, our cookies and stored events gone and nothing more sent.
 */

// Bundled into one classic script exposing `window.consentAdapters`.
const bundleAdapters = () =>
  bundleIife(
    `export { googleConsentMode } from '../../src/integrations/consent/google-consent-mode.ts'
export { tcfConsent } from '../../src/integrations/consent/tcf.ts'
export { CmpApi } from '@iabtechlabtcf/cmpapi'`,
    {
      from: import.meta.url,
      name: 'consentAdapters',
      // The IAB's cmpapi has import cycles of its own (response/ ↔ command/); ours must have none.
      ignore: cycleWithin('@iabtechlabtcf/')
    }
  )

// One browser and the servers for the file; a fresh context and an empty collector per test.
const suite = chromiumSuite()
let adapters: string

beforeAll(async () => {
  adapters = await bundleAdapters()
})

const target = `{ consent: (state) => discoveryFeedback('consent', state) }`
const scriptTag = (pending: boolean) =>
  `<script src="/discovery-feedback.min.js" data-key="KEY" data-endpoint="{{collector}}"${pending ? ' data-consent="pending"' : ''}></script>`

/** What of ours the page holds: df_ cookies (by the browser's own list) and df_ localStorage keys. */
const ours = async (page: Page) => ({
  cookies: (await page.context().cookies()).map((cookie) => cookie.name).filter((name) => name.startsWith('df_')),
  storage: await page.evaluate(() => Object.keys(localStorage).filter((key) => key.startsWith('df_')))
})

/** Tracks a click in the page, through the script tag's command function. */
const click = (page: Page, id: string) => page.evaluate((id) => (window as any).discoveryFeedback('click-item', { item_id: id, variant_item_id: id }), id)
const flush = (page: Page) => page.evaluate(() => (window as any).discoveryFeedback('flush'))
const sentIds = () =>
  suite.servers.collector
    .events()
    .filter((event) => event.event == 'click-item')
    .map((event) => (event.properties as { item_id: string }).item_id)

/**
 * The three steps on a page whose adapter is set up and whose banner is driven by `grant` and
 * `withdraw`: before consent, after it, after withdrawal.
 */
async function threeSteps(page: Page, grant: () => Promise<unknown>, withdraw: () => Promise<unknown>, waited = true) {
  const { pageErrors } = watch(page)
  await click(page, 'before')
  await flush(page)
  // Longer than the script tag's one-second batching, with a flush and the page's view-page waiting too.
  await sleep(1500)
  expect(suite.servers.posts()).toEqual([])
  expect(await ours(page)).toEqual({ cookies: [], storage: [] })

  await grant()
  await waitFor(() => sentIds().includes('before'), 'the click before at the collector')
  const events = suite.servers.collector.events()
  // The page's view-page and click waited in memory (unless a denied default dropped them).
  if (waited) expect(events.map((event) => event.event)).toEqual(expect.arrayContaining(['view-page', 'click-item']))
  // The events waited without a user and got the shopper's identity at consent.
  expect(events.every((event) => event.user.uid)).toBe(true)
  expect((await ours(page)).cookies.sort()).toEqual(['df_sid', 'df_uid'])
  await click(page, 'granted')
  await waitFor(() => sentIds().includes('granted'), 'the click granted at the collector')

  await withdraw()
  await page.waitForFunction(() => !document.cookie.includes('df_'))
  await whenQuiet(() => suite.servers.posts().length)
  const posts = suite.servers.posts().length
  await click(page, 'after')
  await flush(page)
  await sleep(1500)
  expect(suite.servers.posts()).toHaveLength(posts)
  expect(sentIds()).toEqual(['before', 'granted'])
  expect(await ours(page)).toEqual({ cookies: [], storage: [] })
  expect(pageErrors).toEqual([])
}

describe('Google Consent Mode in a real page', () => {
  for (const pending of [false, true]) {
    it(`nothing before consent, sent after the update to granted, stopped and cleared after the update to denied (script tag ${pending ? 'with' : 'without'} data-consent="pending")`, async () => {
      const page = await suite.context.newPage()
      const path = `/consent-mode-${pending}`
      // Google's snippet, a default as CMPs set it (region-scoped: counted here wherever the
      // visitor is), then the adapter, then our script tag.
      suite.servers.page(
        path,
        `<script>window.dataLayer = window.dataLayer || []; function gtag(){dataLayer.push(arguments)}
gtag('consent', 'default', { analytics_storage: 'denied', ad_storage: 'denied', region: ['DE', 'FR'] })</script>
${STUB}<script>${adapters}</script>
<script>consentAdapters.googleConsentMode(${target})</script>
${scriptTag(pending)}`
      )
      await page.goto(suite.servers.origin + path)
      const gtag = (state: string) => page.evaluate((state) => (window as any).gtag('consent', 'update', { analytics_storage: state }), state)
      // A denied default is no answer: the events wait (pending) and leave with the update to granted.
      await threeSteps(
        page,
        () => gtag('granted'),
        () => gtag('denied')
      )
    })
  }

  it('with no consent command at all, stays pending: the events wait, then leave on the first update', async () => {
    const page = await suite.context.newPage()
    // Our script tag first this time, without data-consent: the adapter after it forces pending.
    suite.servers.page(
      '/consent-mode-none',
      `<script>window.dataLayer = window.dataLayer || []; function gtag(){dataLayer.push(arguments)}</script>
${STUB}${scriptTag(false)}<script>${adapters}</script>
<script>consentAdapters.googleConsentMode(${target})</script>`
    )
    await page.goto(suite.servers.origin + '/consent-mode-none')
    const gtag = (state: string) => page.evaluate((state) => (window as any).gtag('consent', 'update', { analytics_storage: state }), state)
    await threeSteps(
      page,
      () => gtag('granted'),
      () => gtag('denied')
    )
  })
})

describe('IAB TCF v2.2 with the IAB CMP API in a real page', () => {
  for (const pending of [false, true]) {
    it(`nothing before consent, sent after the shopper accepts, stopped and cleared after a new TC string without purpose 8 (script tag ${pending ? 'with' : 'without'} data-consent="pending")`, async () => {
      const page = await suite.context.newPage()
      const path = `/tcf-${pending}`
      // The adapter comes before the CMP here, which it waits for; the CMP's API answers
      // addEventListener only from its first update().
      suite.servers.page(
        path,
        `${STUB}<script>${adapters}</script>
<script>consentAdapters.tcfConsent(${target})</script>
${scriptTag(pending)}
<script>setTimeout(() => { window.cmpApi = new consentAdapters.CmpApi(10, 1, true) }, 200)</script>`
      )
      await page.goto(suite.servers.origin + path)
      await page.waitForFunction(() => (window as any).cmpApi)
      const update = (tc: string, ui: boolean) => page.evaluate(([tc, ui]) => (window as any).cmpApi.update(tc, ui), [tc, ui] as const)
      // A new visitor: the banner shows (cmpuishown, every consent false).
      await update('', true)
      await threeSteps(
        page,
        () => update(tcString([1, 2, 7, 8, 9, 10]), false),
        async () => {
          // The shopper reopens the banner and keeps only storage and ads measurement.
          await update(tcString([1, 2, 7, 8, 9, 10]), true)
          await update(tcString([1, 7]), false)
        }
      )
    })
  }

  it('a stored choice (tcloaded) grants at once; a CMP where GDPR does not apply grants too', async () => {
    const page = await suite.context.newPage()
    suite.servers.page(
      '/tcf-stored',
      `${STUB}<script>${adapters}</script>
<script>window.cmpApi = new consentAdapters.CmpApi(10, 1, true); consentAdapters.tcfConsent(${target})</script>
${scriptTag(false)}`
    )
    await page.goto(suite.servers.origin + '/tcf-stored')
    await page.evaluate((tc) => (window as any).cmpApi.update(tc, false), tcString([1, 8]))
    await click(page, 'stored')
    await waitFor(() => sentIds().includes('stored'), 'the click stored at the collector')
    expect((await ours(page)).cookies.sort()).toEqual(['df_sid', 'df_uid'])

    await page.goto(suite.servers.origin + '/tcf-stored?outside-gdpr')
    await page.evaluate(() => (window as any).cmpApi.update(null, false))
    await click(page, 'outside')
    await waitFor(() => sentIds().includes('outside'), 'the click outside at the collector')
  })
})
