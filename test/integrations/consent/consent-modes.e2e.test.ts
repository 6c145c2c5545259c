// @vitest-environment node
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { Frame, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bundleIife, cycleWithin } from '../../support/bundle'
import { chromiumSuite, startPages, STUB, watch, whenQuiet } from '../../support/harness'
import { tcString } from '../../support/tcf'
import { sleep, waitFor } from '../../support/wait'

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
    `export { googleConsentMode } from '../../../src/integrations/consent/google-consent-mode.ts'
export { tcfConsent } from '../../../src/integrations/consent/tcf.ts'
export { CmpApi, CmpApiModel } from '@iabtechlabtcf/cmpapi'`,
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

// The IAB's CMP stub, as a CMP puts it at the top of the shop's page.
const IAB_STUB = readFileSync(createRequire(import.meta.url).resolve('@iabtechlabtcf/stub'), 'utf8')
// A second page server: another origin (its own port) on the same site, as a widget's frame.
let widgets: Awaited<ReturnType<typeof startPages>>

beforeAll(async () => {
  ;[adapters, widgets] = await Promise.all([bundleAdapters(), startPages()])
})
afterAll(async () => {
  await widgets?.close()
})

const target = `{ consent: (state) => discoveryFeedback('consent', state) }`
const scriptTag = (pending: boolean) =>
  `<script src="/discovery-feedback.min.js" data-key="KEY" data-endpoint="{{collector}}"${pending ? ' data-consent="pending"' : ''}></script>`

/** What of ours the page (or the frame) holds: df_ cookies (by the browser's own list) and df_ localStorage keys. */
const ours = async (page: Page | Frame) => ({
  cookies: (await suite.context.cookies()).map((cookie) => cookie.name).filter((name) => name.startsWith('df_')),
  storage: await page.evaluate(() => Object.keys(localStorage).filter((key) => key.startsWith('df_')))
})

/** Tracks a click in the page (or the frame), through the script tag's command function. */
const click = (page: Page | Frame, id: string) =>
  page.evaluate((id) => (window as any).discoveryFeedback('click-item', { item_id: id, variant_item_id: id }), id)
const flush = (page: Page | Frame) => page.evaluate(() => (window as any).discoveryFeedback('flush'))
const sentIds = () =>
  suite.servers.collector
    .events()
    .filter((event) => event.event == 'click-item')
    .map((event) => (event.properties as { item_id: string }).item_id)

/**
 * The three steps on a page whose adapter is set up and whose banner is driven by `grant` and
 * `withdraw`: before consent, after it, after withdrawal. The tracker runs in `frame`, by
 * default the page itself.
 */
async function threeSteps(page: Page, grant: () => Promise<unknown>, withdraw: () => Promise<unknown>, frame: Page | Frame = page) {
  const { pageErrors } = watch(page)
  await click(frame, 'before')
  await flush(frame)
  // Longer than the script tag's one-second batching, with a flush and the page's view-page waiting too.
  await sleep(1500)
  expect(suite.servers.posts()).toEqual([])
  expect(await ours(frame)).toEqual({ cookies: [], storage: [] })

  await grant()
  // Longer than the default: in a frame, the state is asked for once a second.
  await waitFor(() => sentIds().includes('before'), 'the click before at the collector', 15000)
  const events = suite.servers.collector.events()
  // The page's view-page and click waited in memory: on every page here, a denied default or no
  // answer yet leaves consent pending, and nothing tracked before consent is dropped.
  expect(events.map((event) => event.event)).toEqual(expect.arrayContaining(['view-page', 'click-item']))
  // The events waited without a user and got the shopper's identity at consent.
  expect(events.every((event) => event.user.uid)).toBe(true)
  expect((await ours(frame)).cookies.sort()).toEqual(['df_sid', 'df_uid'])
  await click(frame, 'granted')
  await waitFor(() => sentIds().includes('granted'), 'the click granted at the collector', 15000)

  await withdraw()
  await frame.waitForFunction(() => !document.cookie.includes('df_'))
  await whenQuiet(() => suite.servers.posts().length)
  const posts = suite.servers.posts().length
  await click(frame, 'after')
  await flush(frame)
  await sleep(1500)
  expect(suite.servers.posts()).toHaveLength(posts)
  expect(sentIds()).toEqual(['before', 'granted'])
  expect(await ours(frame)).toEqual({ cookies: [], storage: [] })
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
    await waitFor(() => sentIds().includes('stored'), 'the click stored at the collector', 10000)
    expect((await ours(page)).cookies.sort()).toEqual(['df_sid', 'df_uid'])

    await page.goto(suite.servers.origin + '/tcf-stored?outside-gdpr')
    await page.evaluate(() => (window as any).cmpApi.update(null, false))
    await click(page, 'outside')
    await waitFor(() => sentIds().includes('outside'), 'the click outside at the collector', 10000)
  })

  it("in a frame of another origin whose CMP is in the shop's page, reached through the IAB stub's __tcfapiLocator", async () => {
    // The shop's page: the IAB's own stub (it adds the __tcfapiLocator frame and answers
    // postMessage calls), a widget frame from another origin with our script tag and the
    // adapter, which has no __tcfapi of its own, and a second frame of another origin that
    // forges the CMP's answers to the widget. The CMP comes when the test says. Until then the
    // page records the calls that reach it and keeps them from the stub, as a page whose CMP
    // does not answer yet: they are lost, and later ones must still get through.
    suite.servers.page(
      '/tcf-top',
      `<script>window.calls = []; window.holding = true
addEventListener('message', (event) => {
  const call = event.data?.__tcfapiCall
  if (!call) return
  calls.push(call)
  if (holding) event.stopImmediatePropagation()
})</script>
<script>${IAB_STUB}</script><script>${adapters}</script>
<iframe name="widget" src="${widgets.origin}/tcf-widget"></iframe>
<iframe name="forger" src="${widgets.origin}/forger"></iframe>`
    )
    widgets.page(
      '/tcf-widget',
      `${STUB}<script>${adapters}</script>
<script>consentAdapters.tcfConsent(${target})</script>
${scriptTag(false).replace('{{collector}}', suite.servers.collector.url)}`
    )
    widgets.page('/forger', '')
    const page = await suite.context.newPage()
    await page.goto(suite.servers.origin + '/tcf-top')
    const widget = page.frame({ name: 'widget' })!
    const forger = page.frame({ name: 'forger' })!
    await widget.waitForFunction(() => (window as any).discoveryFeedback?.tracker)
    expect(await widget.evaluate(() => typeof (window as any).__tcfapi)).toBe('undefined')

    // The widget asks (ping) through the locator. The forger answers its latest question, as an
    // object and as JSON, with a loaded CMP: from a window that is not the CMP's, so ignored,
    // and the widget never goes on to register a listener.
    await page.waitForFunction(() => (window as any).calls.some((call: { command: string }) => call.command == 'ping'))
    const pings = await page.evaluate(() => (window as any).calls.filter((call: { command: string }) => call.command == 'ping'))
    await forger.evaluate(
      (callId) => {
        const widget = parent.frames['widget' as unknown as number]
        const loaded = { __tcfapiReturn: { callId, success: true, returnValue: { cmpStatus: 'loaded', cmpLoaded: true } } }
        widget.postMessage(loaded, '*')
        widget.postMessage(JSON.stringify(loaded), '*')
      },
      pings[pings.length - 1].callId
    )
    const registered = () => page.evaluate(() => (window as any).calls.some((call: { command: string }) => call.command == 'addEventListener'))

    const update = (tc: string, ui: boolean) => page.evaluate(([tc, ui]) => (window as any).cmpApi.update(tc, ui), [tc, ui] as const)
    await threeSteps(
      page,
      async () => {
        expect(await registered()).toBe(false)
        // The CMP loads, shows its banner, and the shopper accepts.
        await page.evaluate(() => {
          ;(window as any).holding = false
          ;(window as any).cmpApi = new (window as any).consentAdapters.CmpApi(10, 1, true)
        })
        await update('', true)
        await update(tcString([1, 2, 7, 8, 9, 10]), false)
      },
      async () => {
        await update(tcString([1, 2, 7, 8, 9, 10]), true)
        await update(tcString([1, 7]), false)
      },
      widget
    )
    // The widget went on asking once a second, and removed each question's listener once it was
    // answered: the CMP's listeners (the page registers none of its own) come back to none.
    const questions = await page.evaluate(() => (window as any).calls.filter((call: { command: string }) => call.command == 'addEventListener').length)
    expect(questions).toBeGreaterThanOrEqual(3)
    await page.waitForFunction(() => (window as any).consentAdapters.CmpApiModel.eventQueue.size == 0, undefined, { timeout: 10000 })
  })
})
