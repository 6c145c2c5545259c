// @vitest-environment node
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { launch, watch } from '../support/harness'
import { waitFor } from '../support/wait'
import { checkoutCompleted, consent, registerInit, sampleOrder } from './events'
import { bundleAppPixel, pixelErrors, publish, setConsent, startPixel, startProbe, startShop, type Probed } from './shop'

// The pixel host (demo/shopify/host.js) itself, in Chromium: a small test pixel, not the library,
// proves each sandbox behaves as Shopify's does for what the library relies on.

let browser: Browser
let context: BrowserContext
let shop: Awaited<ReturnType<typeof startShop>>
let probe: Awaited<ReturnType<typeof startProbe>>

beforeAll(async () => {
  ;[browser, shop, probe] = await Promise.all([launch(), startShop(), startProbe()])
})
afterAll(async () => {
  await browser?.close()
  await shop?.close()
  await probe?.close()
})
beforeEach(async (test) => {
  probe.received.splice(0)
  context = await browser.newContext()
  test.onTestFinished(() => context.close())
})

// The pixel reports what it sees by fetch to the probe, one path per thing, so each report also
// shows the Origin its sandbox's requests carry. It uses `api` only, which both sandboxes give.
const body = (probeUrl: string) => `
const report = (what, value) => fetch(${JSON.stringify(probeUrl)} + '/' + what, { method: 'POST', body: JSON.stringify(value === undefined ? null : value) })
const attempt = (read) => {
  try {
    return { value: read() }
  } catch (error) {
    return { threw: error.name }
  }
}
report('globals', {
  window: typeof window,
  document: typeof document,
  origin: self.origin,
  cookie: attempt(() => document.cookie),
  storage: attempt(() => localStorage.getItem('from_page'))
})
report('init', { init: api.init, settings: api.settings })
;(async () => {
  const x = await api.browser.cookie.get('x')
  const all = await api.browser.cookie.get()
  const missing = await api.browser.cookie.get('missing')
  const set = await api.browser.cookie.set('df_sid=abc; path=/; max-age=1800; SameSite=Lax')
  const pair = await api.browser.cookie.set('df_pair', 'two')
  await api.browser.localStorage.setItem('from_pixel', 'yes')
  const local = await api.browser.localStorage.getItem('from_page')
  const session = await api.browser.sessionStorage.getItem('from_page')
  report('browser', { x, all, missing, set, pair, local, session })
})()
api.analytics.subscribe('checkout_completed', (event) => report('checkout_completed', event))
api.analytics.subscribe('all_standard_events', (event) => report('standard', { name: event.name, seq: event.seq }))
api.customerPrivacy.subscribe('visitorConsentCollected', (payload) => report('consent', payload))
`

// A custom pixel's code is pasted as is; it also has analytics, browser and init in scope.
const customPixel = (probeUrl: string) =>
  body(probeUrl) + "report('scope', { analytics: analytics === api.analytics, browser: browser === api.browser, init: init === api.init })"

// An app pixel is a bundle of an entry that calls the package's real register().
const appPixel = (probeUrl: string) => bundleAppPixel(`import { register } from '@shopify/web-pixels-extension'\nregister((api) => {\n${body(probeUrl)}\n})`)

const reported = (path: string) => probe.received.filter((request) => request.path == '/' + path)
const one = (path: string): Probed => {
  const found = reported(path)
  expect(found, path).toHaveLength(1)
  return found[0]
}

async function openShop(): Promise<Page> {
  const page = await context.newPage()
  await page.goto(shop.origin + '/')
  await page.evaluate(() => {
    document.cookie = 'x=1; path=/'
    localStorage.setItem('from_page', 'local')
    sessionStorage.setItem('from_page', 'session')
  })
  return page
}

describe.each(['lax', 'strict'] as const)('the %s sandbox in Chromium', (sandbox) => {
  const code = () => (sandbox == 'lax' ? Promise.resolve(customPixel(probe.url)) : appPixel(probe.url))

  it("runs the pixel on an opaque origin, with the shop's cookies and storage through browser.* only", async () => {
    const page = await openShop()
    const seen = watch(page)
    const init = registerInit()
    await startPixel(page, { sandbox, code: await code(), init, settings: { key: 'demo-key' } })
    await waitFor(() => reported('browser').length > 0, 'the browser report', 10000)

    const globals = one('globals').body
    if (sandbox == 'lax') {
      expect(globals).toMatchObject({ window: 'object', document: 'object', origin: 'null' })
      // The iframe's own cookie jar and storage belong to no origin: reading them throws.
      expect(globals.cookie).toEqual({ threw: 'SecurityError' })
      expect(globals.storage).toEqual({ threw: 'SecurityError' })
      expect(one('scope').body).toEqual({ analytics: true, browser: true, init: true })
    } else {
      expect(globals).toMatchObject({ window: 'undefined', document: 'undefined', origin: 'null' })
      expect(globals.cookie).toEqual({ threw: 'ReferenceError' })
    }
    expect(one('init').body).toEqual({ init, settings: { key: 'demo-key' } })

    expect(one('browser').body).toEqual({
      x: '1',
      all: 'x=1',
      missing: '',
      set: 'df_sid=abc; path=/; max-age=1800; SameSite=Lax',
      pair: 'df_pair=two',
      local: 'local',
      session: 'session'
    })
    // What the pixel set is the top page's.
    const cookies = await page.evaluate(() => document.cookie.split('; ').sort())
    expect(cookies).toEqual(['df_pair=two', 'df_sid=abc', 'x=1'])
    expect(await page.evaluate(() => localStorage.getItem('from_pixel'))).toBe('yes')

    // Every request from the sandbox, to another origin, carries Origin: null.
    expect(new Set(probe.received.map((request) => request.origin))).toEqual(new Set(['null']))
    expect(await pixelErrors(page)).toEqual([])
    expect(seen.pageErrors).toEqual([])
  })

  it("delivers events with Shopify's fields, those published before the pixel ran included, and consent changes", async () => {
    const page = await openShop()
    const pixel = await code()
    // page_viewed is published before the pixel's code has even started.
    const [early] = await startPixel(page, { sandbox, code: pixel, init: registerInit({ customerPrivacy: consent(false) }) }, [['page_viewed', {}]])
    const data = checkoutCompleted(sampleOrder())
    const completed = await publish(page, 'checkout_completed', data)
    await waitFor(() => reported('standard').length == 2 && reported('checkout_completed').length == 1, 'both events', 10000)

    expect(
      reported('standard')
        .map((request) => request.body)
        .sort((a, b) => a.seq - b.seq)
    ).toEqual([
      { name: 'page_viewed', seq: early.seq },
      { name: 'checkout_completed', seq: completed.seq }
    ])
    const event = one('checkout_completed').body
    expect(event).toEqual(completed)
    expect(Object.keys(event).sort()).toEqual(['clientId', 'context', 'data', 'id', 'name', 'seq', 'timestamp', 'type'])
    expect(event).toMatchObject({ name: 'checkout_completed', type: 'standard', data })
    expect(event.seq).toBeGreaterThan(early.seq)
    expect(event.clientId).toBe(early.clientId)
    expect(new Date(event.timestamp).toISOString()).toBe(event.timestamp)
    expect(event.context.document.location.href).toBe(shop.origin + '/')
    expect(event.context.window).toMatchObject({ origin: shop.origin, innerWidth: 1280, innerHeight: 720 })
    expect(event.context.navigator.userAgent).toMatch(/Chrome/)

    await setConsent(page, { analyticsProcessingAllowed: true })
    await waitFor(() => reported('consent').length == 1, 'the consent event', 10000)
    expect(one('consent').body).toEqual({ customerPrivacy: { ...consent(false), analyticsProcessingAllowed: true } })
  })

  it("rejects ready with the error the pixel's code throws", async () => {
    const page = await openShop()
    const thrower =
      sandbox == 'lax'
        ? "throw new Error('broken pixel')"
        : await bundleAppPixel("import { register } from '@shopify/web-pixels-extension'\nregister(() => { throw new Error('broken pixel') })")
    await expect(startPixel(page, { sandbox, code: thrower })).rejects.toThrow(/broken pixel/)
    expect((await pixelErrors(page))[0]).toMatch(/broken pixel/)
  })
})
