// @vitest-environment node
import { readFileSync } from 'node:fs'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { launch, leave, startServers, type Servers } from '../support/harness'
import { sleep, waitFor } from '../support/wait'
import { sandboxRunner, templatePermissions, templateSections, templateTests } from './gtm-sandbox'

/*
 * The GTM template (gtm/discovery-feedback.tpl) as a container would run it: its sandboxed code
 * in a real Chromium page, against an emulation of the sandbox's APIs that checks each call
 * against the permissions the template declares (gtm-sandbox.ts). The script tag it injects is
 * answered, at its real unpkg.com URL, with this build.
 */

const TEMPLATE = 'gtm/discovery-feedback.tpl'
const SCRIPT_URL = 'https://unpkg.com/discovery-feedback/dist/discovery-feedback.min.js'
const SCRIPT = readFileSync('dist/discovery-feedback.min.js', 'utf8')
const BRIDGE_URL = 'https://unpkg.com/discovery-feedback/dist/discovery-feedback-datalayer.min.js'
const BRIDGE = readFileSync('dist/discovery-feedback-datalayer.min.js', 'utf8')

let browser: Browser
let servers: Servers
beforeAll(async () => {
  ;[browser, servers] = await Promise.all([launch(), startServers()])
  servers.page('/', `<title>shop</title><script>${sandboxRunner(TEMPLATE)}</script>`)
  // A product page whose platform pushed GA4's view_item before GTM fired the tag.
  servers.page(
    '/products/shirt',
    `<title>shirt</title><script>window.dataLayer = [{ event: 'view_item', ecommerce: { items: [{ item_id: 'SKU-1', price: 20 }] } }]</script>` +
      `<script>${sandboxRunner(TEMPLATE)}</script>`
  )
})
afterAll(async () => {
  await browser?.close()
  await servers?.close()
})
beforeEach(() => {
  servers.collector.clear()
})

/** A new shopper's page, with the template's runner, and the scripts' URLs answered with this build. */
async function shopPage(path = '/') {
  const context = await browser.newContext()
  const page = await context.newPage()
  await page.route(SCRIPT_URL, (route) => route.fulfill({ contentType: 'text/javascript', body: SCRIPT }))
  await page.route(BRIDGE_URL, (route) => route.fulfill({ contentType: 'text/javascript', body: BRIDGE }))
  await page.goto(servers.origin + path)
  return { context, page }
}

/** Fires the tag once with the template's fields; resolves 'success' or 'failure', as GTM would hear it. */
const fire = (page: Page, fields: Record<string, string>) =>
  page.evaluate(
    (fields) =>
      new Promise<string>((resolve) =>
        (window as any).runTemplate({ ...fields, gtmOnSuccess: () => resolve('success'), gtmOnFailure: () => resolve('failure') })
      ),
    fields
  )

const stored = async (page: Page) => ({
  cookies: (await page.context().cookies()).map((cookie) => cookie.name).filter((name) => name.startsWith('df_')),
  storage: await page.evaluate(() => Object.keys(localStorage).filter((key) => key.startsWith('df_')))
})

const click = (page: Page, item: string) =>
  page.evaluate((item) => (window as any).discoveryFeedback('click-item', { item_id: item, variant_item_id: 'v' }), item)
const clicked = () =>
  servers.collector
    .events()
    .filter((event) => event.event == 'click-item')
    .map((event) => (event.properties as { item_id: string }).item_id)

/**
 * Withdraws consent through GTM (its consent listener, then callInWindow to the tracker), clicks
 * once more and leaves the page: only the clicks `before` were sent, and no df_ cookie is left.
 */
async function withdrawAndCheck(page: Page, before: string[]) {
  await page.evaluate(() => (window as any).setGtmConsent('analytics_storage', false))
  await click(page, 'after-withdrawal')
  await leave(page)
  await sleep(1000)
  expect(clicked()).toEqual(before)
  expect((await page.context().cookies()).map((cookie) => cookie.name).filter((name) => name.startsWith('df_'))).toEqual([])
}

describe('the GTM template', () => {
  it('declares the sections GTM imports, and the permissions its code uses', () => {
    const sections = templateSections(TEMPLATE)
    expect(Object.keys(sections)).toEqual(['TERMS_OF_SERVICE', 'INFO', 'TEMPLATE_PARAMETERS', 'SANDBOXED_JS_FOR_WEB_TEMPLATE', 'WEB_PERMISSIONS', 'TESTS'])
    expect(JSON.parse(sections.INFO)).toMatchObject({ type: 'TAG', containerContexts: ['WEB'] })
    expect(JSON.parse(sections.TEMPLATE_PARAMETERS).map((field: { name: string }) => field.name)).toEqual([
      'key',
      'endpoint',
      'scriptUrl',
      'bridgeDataLayer',
      'bridgeUrl'
    ])
    expect(Object.keys(templatePermissions(TEMPLATE)).sort()).toEqual(['access_consent', 'access_globals', 'access_template_storage', 'inject_script'])
  })

  it('loads the script tag, creates the tracker with the key and endpoint, and replays what was queued before it loaded', async () => {
    const { context, page } = await shopPage()
    const outcome = fire(page, { key: 'KEY', endpoint: servers.collector.url, scriptUrl: SCRIPT_URL })
    // The page's own calls right after the tag fired, before the script has loaded: they wait in the queue.
    await click(page, 'before-load')
    expect(await outcome).toBe('success')
    await page.waitForFunction(() => (window as any).discoveryFeedback.tracker)
    await click(page, 'after-load')
    await leave(page)
    await waitFor(() => clicked().length == 2, 'both clicks', 10000)
    await sleep(300)
    expect(clicked()).toEqual(['before-load', 'after-load'])
    expect(servers.collector.events().every((event) => event.key == 'KEY')).toBe(true)
    await context.close()
  })

  it('fired twice: one tracker, one script, no second init', async () => {
    const { context, page } = await shopPage()
    const errors: string[] = []
    page.on('console', (message) => message.type() == 'error' && errors.push(message.text()))
    const fields = { key: 'KEY', endpoint: servers.collector.url, scriptUrl: SCRIPT_URL }
    expect(await Promise.all([fire(page, fields), fire(page, fields)])).toEqual(['success', 'success'])
    expect(await page.evaluate(() => document.querySelectorAll('script[src*="unpkg.com"]').length)).toBe(1)
    const inits = await page.evaluate(() => (window as any).gtmCalls.filter((call: unknown[]) => call[0] == 'callInWindow' && call[2] == 'init').length)
    expect(inits).toBe(1)
    expect(errors).toEqual([])
    await context.close()
  })

  it('fired again after the script has loaded (a History Change trigger): the tracker keeps its command function, and later calls and a consent withdrawal reach it', async () => {
    const { context, page } = await shopPage()
    const fields = { key: 'KEY', endpoint: servers.collector.url, scriptUrl: SCRIPT_URL }
    expect(await fire(page, fields)).toBe('success')
    await page.waitForFunction(() => (window as any).discoveryFeedback.tracker)
    expect(await fire(page, fields)).toBe('success')
    // A queue put in place of the command function would take this click and never send it.
    await click(page, 'after-second-firing')
    await page.evaluate(() => (window as any).discoveryFeedback('flush'))
    await waitFor(() => clicked().length == 1, 'the click after the second firing', 10000)
    expect((await stored(page)).cookies.sort()).toEqual(['df_sid', 'df_uid'])
    // The withdrawal goes through GTM's consent listener and callInWindow, to the tracker.
    await withdrawAndCheck(page, ['after-second-firing'])
    await context.close()
  })

  it("follows GTM's analytics_storage consent: nothing sent or stored before it is granted, everything after, and withdrawal clears what the tracker kept", async () => {
    const { context, page } = await shopPage()
    await page.evaluate(() => ((window as any).gtmConsent.analytics_storage = false))
    expect(await fire(page, { key: 'KEY', endpoint: servers.collector.url, scriptUrl: SCRIPT_URL })).toBe('success')
    await page.waitForFunction(() => (window as any).discoveryFeedback.tracker)
    await click(page, 'waiting')
    await page.evaluate(() => (window as any).discoveryFeedback('flush'))
    await sleep(1500)
    expect(clicked()).toEqual([])
    expect(await stored(page)).toEqual({ cookies: [], storage: [] })

    await page.evaluate(() => (window as any).setGtmConsent('analytics_storage', true))
    await waitFor(() => clicked().length == 1, 'the waiting click', 10000)
    expect((await stored(page)).cookies.sort()).toEqual(['df_sid', 'df_uid'])

    await withdrawAndCheck(page, ['waiting'])
    await context.close()
  })

  it("passes its own template tests (___TESTS___), run with this emulation's test APIs", async () => {
    const { setup, scenarios } = templateTests(TEMPLATE)
    expect(scenarios.length).toBeGreaterThan(0)
    for (const { name, code } of scenarios) {
      const { context, page } = await shopPage()
      expect(await page.evaluate(([setup, code]) => (window as any).runTemplateTest(setup, code), [setup, code]), name).toBe('passed')
      await context.close()
    }
  })

  it('fails the tag, and loads nothing, for a script URL its permissions do not cover', async () => {
    const { context, page } = await shopPage()
    expect(await fire(page, { key: 'KEY', endpoint: servers.collector.url, scriptUrl: 'https://cdn.elsewhere.example/tracker.js' })).toBe('failure')
    expect(await page.evaluate(() => (window as any).gtmCalls.find((call: unknown[]) => call[0] == 'error'))).toEqual([
      'error',
      'Permission denied: injectScript: https://cdn.elsewhere.example/tracker.js matches no declared URL pattern'
    ])
    expect(await page.evaluate(() => document.querySelectorAll('script[src]').length)).toBe(0)
    await context.close()
  })

  it('with the data-layer bridge: loads it before the tracker, so the view_item pushed before the tag names the page view-page, and a later purchase arrives', async () => {
    const { context, page } = await shopPage('/products/shirt')
    const fields = { key: 'KEY', endpoint: servers.collector.url, scriptUrl: SCRIPT_URL, bridgeDataLayer: true, bridgeUrl: BRIDGE_URL }
    expect(await fire(page, fields as never)).toBe('success')
    expect(await page.evaluate(() => [...document.querySelectorAll('script[src]')].map((script) => (script as HTMLScriptElement).src))).toEqual([
      BRIDGE_URL,
      SCRIPT_URL
    ])
    await page.waitForFunction(() => (window as any).discoveryFeedback.tracker)
    await page.evaluate(() =>
      (window as any).dataLayer.push({
        event: 'purchase',
        ecommerce: { transaction_id: 'T-7', currency: 'EUR', value: 20, items: [{ item_id: 'SKU-1', price: 20 }] }
      })
    )
    await leave(page)
    await waitFor(() => servers.collector.events().some((event) => event.event == 'purchase'), 'the purchase', 10000)
    await sleep(300)
    const events = servers.collector.events()
    expect(events.filter((event) => event.event == 'view-page').map((event) => (event.properties as { item_id?: string }).item_id)).toEqual(['SKU-1'])
    expect(events.filter((event) => event.event == 'purchase').map((event) => (event.properties as { order_id: string }).order_id)).toEqual(['T-7'])
    await context.close()
  })

  it('with the bridge unreachable: the tracker still loads, and the tag succeeds', async () => {
    const { context, page } = await shopPage('/products/shirt')
    await page.route(BRIDGE_URL, (route) => route.abort())
    const fields = { key: 'KEY', endpoint: servers.collector.url, scriptUrl: SCRIPT_URL, bridgeDataLayer: true, bridgeUrl: BRIDGE_URL }
    expect(await fire(page, fields as never)).toBe('success')
    await page.waitForFunction(() => (window as any).discoveryFeedback.tracker)
    await leave(page)
    await waitFor(() => servers.collector.events().some((event) => event.event == 'view-page'), 'the view-page', 10000)
    expect(servers.collector.events().find((event) => event.event == 'view-page')!.properties).not.toHaveProperty('item_id')
    await context.close()
  })
})
