// @vitest-environment node
import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { customPixelCode } from '../../src/collector'
// @ts-expect-error plain ES module without types
import { startDemo } from '../../demo/server.mjs'
import { createServerTracker } from '../../src/server'
import { validate, type Envelope } from '../../src/index'
import { orderEventId } from '../../src/shared/order-event-id'
import { launch, leave, watch, whenQuiet } from '../support/harness'
import { sleep, waitFor } from '../support/wait'
import { checkoutCompleted, checkoutStarted, consent, sampleOrder } from './events'
import { bundleAppPixel, LOAD_HOST, publish, setConsent, startPixel } from './shop'

/*
 * The whole path in real Chromium: a shopper walks the demo store (the storefront script
 * tag, the reference collector), then reaches a checkout page where Shopify would run our pixel,
 * here in the emulated sandboxes of demo/shopify/host.js: the custom pixel's pasted code in an
 * <iframe sandbox="allow-scripts">, and an app pixel (Shopify's own register) in a Web Worker of
 * opaque origin, each reaching the shop only through the Standard API over postMessage. The
 * pixel's endpoint is a switch in front of the same collector, to take it down.
 */

const KEY = 'demo-key'
const APP_PIXEL = `import { register } from '@shopify/web-pixels-extension'
import { connectShopify } from '../../dist/shopify.mjs'
register((api) => connectShopify(api, api.settings))`

let browser: Browser
let demo: { url: string; close: () => Promise<void> }
let file: string
let appBundle: string
let shopServer: Server
let shop: string
let endpoint: string
let collectorDown = false
let refusedPosts = 0
// While set, the collector stores each batch but holds its answer back this long.
let answerDelay = 0
// How many times each event id reached the collector while it was up, before its dedupe.
const posted = new Map<string, number>()

const stored = (): Envelope[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line))
const purchasesOf = (orderId: string) => stored().filter((event) => event.event == 'purchase' && event.properties.order_id == orderId)

beforeAll(async () => {
  file = join(mkdtempSync(join(tmpdir(), 'shopify-checkout-')), 'events.ndjson')
  ;[browser, demo, appBundle] = await Promise.all([launch(), startDemo({ port: 0, dataFile: file }), bundleAppPixel(APP_PIXEL)])
  // The shop as the browser sees it: the demo store and its collector, passed through, plus the
  // checkout pages Shopify would serve (no storefront script, the pixel host) and storefront
  // pages where Shopify runs the pixel too (?with-pixel). Served over real HTTP, so Chromium
  // places them on the loopback address space with the collector, as a shop and its collector
  // share the public one. The collector can be switched off: every POST's connection dropped.
  shopServer = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk) => chunks.push(chunk))
    request.on('end', async () => {
      const url = new URL(request.url!, 'http://shop')
      if (request.method == 'POST' && collectorDown) {
        refusedPosts++
        return request.socket.destroy()
      }
      if (request.method == 'POST') {
        try {
          for (const event of JSON.parse(Buffer.concat(chunks).toString('utf8'))) posted.set(event.event_id, (posted.get(event.event_id) || 0) + 1)
        } catch {
          // Not a batch: the collector says so.
        }
      }
      if (url.pathname.startsWith('/checkouts/')) {
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>Thank you</title>' + LOAD_HOST)
        return
      }
      const answer = await fetch(demo.url + request.url, {
        method: request.method,
        headers: { cookie: request.headers.cookie || '', accept: request.headers.accept || '*/*' },
        body: request.method == 'POST' ? Buffer.concat(chunks) : undefined
      })
      const headers = Object.fromEntries(answer.headers)
      let body = Buffer.from(await answer.arrayBuffer())
      if (request.method == 'POST' && answerDelay) await sleep(answerDelay)
      if (url.searchParams.has('with-pixel')) {
        body = Buffer.concat([body, Buffer.from(LOAD_HOST)])
        delete headers['content-length']
      }
      response.writeHead(answer.status, headers).end(body)
    })
  })
  await new Promise<void>((resolve) => shopServer.listen(0, '127.0.0.1', resolve))
  shop = `http://127.0.0.1:${(shopServer.address() as { port: number }).port}`
  endpoint = shop + '/v3/feedback'
})
afterAll(async () => {
  await browser?.close()
  await demo?.close()
  shopServer?.closeAllConnections()
  shopServer?.close()
})

let orders = 0
/** An order of its own for each test, with Shopify's id shape. */
const newOrder = () => sampleOrder({ id: 'gid://shopify/OrderIdentity/' + (7100000000000 + Date.now() * 10 + orders++) })
const numeric = (order: { id: string }) => order.id.split('/').pop()!
/** The pixel's kept events in the shop's storage, written through the Standard API. */
const keptKeys = (page: Page) => page.evaluate(() => Object.keys(localStorage).filter((key) => key.startsWith('df_pixel_')))
/** Waits until the pixel has removed its kept copies: the collector's answers reached it. */
const untilAnswered = (page: Page) => waitFor(async () => (await keptKeys(page)).length == 0, "the pixel's kept copies removed", 10000)

describe.each(['lax', 'strict'] as const)('a Shopify checkout with the pixel in the %s sandbox (Chromium)', (sandbox) => {
  /** The pixel's code as a merchant installs it: the pasted custom pixel, or the app pixel's bundle with its settings. */
  const pixel = (extra: Record<string, unknown> = {}) =>
    sandbox == 'lax'
      ? { sandbox, code: customPixelCode({ key: KEY, endpoint, ...extra }) as string }
      : { sandbox, code: appBundle, settings: { key: KEY, endpoint, ...extra } }

  /** Opens a checkout page of the shop (no storefront script, as Shopify's) and starts the pixel there. */
  async function checkoutPage(page: Page, customerPrivacy = consent(true), extra: Record<string, unknown> = {}) {
    const url = `${shop}/checkouts/cn/c${orders}${sandbox}/thank-you`
    await page.goto(url)
    await startPixel(page, { ...pixel(extra), init: { customerPrivacy } })
    return url
  }

  /** Opens a storefront page of the demo store (the script tag runs) where Shopify runs the pixel too. */
  async function storefrontWithPixel(page: Page, path: string) {
    await page.goto(shop + path + '?with-pixel')
    await startPixel(page, pixel())
    return shop + path + '?with-pixel'
  }

  async function shopper(): Promise<{ context: BrowserContext; page: Page; uid: string; sid: string }> {
    const context = await browser.newContext()
    const page = await context.newPage()
    // The storefront walk: a product page, with the script tag.
    await page.goto(shop + '/product/1003')
    let cookies: Record<string, string> = {}
    for (let tries = 0; tries < 100 && !(cookies.df_uid && cookies.df_sid); tries++) {
      cookies = Object.fromEntries((await context.cookies()).map((cookie) => [cookie.name, cookie.value]))
      await sleep(50)
    }
    return { context, page, uid: cookies.df_uid, sid: cookies.df_sid }
  }

  it('after a storefront walk, sends the purchase once, valid by SPEC, with the storefront uid and sid; page views never twice', async () => {
    const { context, page, uid, sid } = await shopper()
    const seen = watch(page)
    const order = newOrder()
    const checkoutUrl = await checkoutPage(page)
    await publish(page, 'page_viewed')
    await publish(page, 'checkout_started', checkoutStarted(order))
    await publish(page, 'checkout_completed', checkoutCompleted(order))
    await waitFor(() => purchasesOf(numeric(order)).length > 0, 'the purchase', 10000)
    // The collector's answer reached the pixel, which then removes its kept copy. A shopper who
    // leaves sooner is the next test's case.
    await untilAnswered(page)

    // The shopper goes on to a storefront page, where both the script tag and the pixel run.
    const productUrl = await storefrontWithPixel(page, '/product/1001')
    await publish(page, 'page_viewed')
    await sleep(1500)
    await leave(page)
    await sleep(500)

    const [purchase, ...more] = purchasesOf(numeric(order))
    expect(more).toEqual([])
    // Sent once, not only stored once.
    expect(posted.get(orderEventId(KEY, numeric(order)))).toBe(1)
    expect(validate('purchase', purchase.properties)).toEqual(purchase.properties)
    expect(purchase).toMatchObject({ key: KEY, event_id: orderEventId(KEY, numeric(order)), user: { uid, sid } })
    expect(purchase.properties).toMatchObject({ currency: 'EUR', revenue: 143.7, total_tax: 22.94, total_shipping: 4.9 })
    expect(purchase.properties.line_items).toHaveLength(2)
    const views = stored().filter((event) => event.event == 'view-page' && event.user.uid == uid)
    // The checkout page's view from the pixel; each storefront page's from the script tag alone.
    expect(views.map((event) => event.properties.url).sort()).toEqual([productUrl, shop + '/product/1003', checkoutUrl].sort())
    expect(views.every((event) => event.user.sid == sid)).toBe(true)
    expect(seen.pageErrors).toEqual([])
    await context.close()
  })

  it('sends nothing while consent is not collected, then everything once the visitor allows analytics', async () => {
    const { context, page, uid } = await shopper()
    const order = newOrder()
    await checkoutPage(page, consent(false))
    await publish(page, 'checkout_completed', checkoutCompleted(order))
    await sleep(1500)
    expect(purchasesOf(numeric(order))).toEqual([])
    await setConsent(page, { analyticsProcessingAllowed: true })
    await waitFor(() => purchasesOf(numeric(order)).length == 1, 'the purchase after consent', 10000)
    expect(purchasesOf(numeric(order))[0].user.uid).toBe(uid)
    await context.close()
  })

  it('sends nothing and writes no cookie nor storage when the visitor declines', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    const order = newOrder()
    await checkoutPage(page, consent(false))
    await publish(page, 'page_viewed')
    await publish(page, 'checkout_completed', checkoutCompleted(order))
    await setConsent(page, { analyticsProcessingAllowed: false })
    await sleep(1500)
    expect(purchasesOf(numeric(order))).toEqual([])
    expect((await context.cookies()).map((cookie) => cookie.name)).toEqual([])
    expect(await page.evaluate(() => Object.keys(localStorage))).toEqual([])
    await context.close()
  })

  it('deletes the storefront’s ids and sends nothing when a returning shopper declines at checkout', async () => {
    const { context, page } = await shopper()
    const order = newOrder()
    await checkoutPage(page, consent(false), { cookieDomain: 'auto' })
    await publish(page, 'checkout_completed', checkoutCompleted(order))
    await setConsent(page, { analyticsProcessingAllowed: false })
    await sleep(1500)
    expect(posted.has(orderEventId(KEY, numeric(order)))).toBe(false)
    expect((await context.cookies()).map((cookie) => cookie.name).filter((name) => name.startsWith('df_'))).toEqual([])
    await context.close()
  })

  it('stores the order once when the thank-you template and the Node sender track it too', async () => {
    const { context, page, uid, sid } = await shopper()
    const order = newOrder()
    const properties = {
      order_id: numeric(order),
      currency: 'EUR',
      revenue: 143.7,
      line_items: [{ item_id: '7234567890123', variant_item_id: '42123456789012', unit_price: 39.9, quantity: 2 }]
    }
    // The thank-you template's call, on a page with the script tag, then the pixel's, then the server's.
    await page.evaluate((properties) => (window as any).discoveryFeedback('purchase', properties), properties)
    await page.evaluate(() => (window as any).discoveryFeedback('flush'))
    const id = orderEventId(KEY, numeric(order))
    await waitFor(() => posted.get(id) == 1, "the thank-you template's purchase", 10000)
    await checkoutPage(page)
    await publish(page, 'checkout_completed', checkoutCompleted(order))
    const server = createServerTracker({ key: KEY, endpoint: demo.url + '/v3/feedback' })
    server.track('purchase', properties, { uid, sid, ip: '203.0.113.9', ua: 'Mozilla/5.0' })
    await server.close()
    await waitFor(() => posted.get(id) == 2, "the pixel's purchase", 10000)
    await untilAnswered(page)
    await leave(page)
    await sleep(500)
    // All three sent it: the page's and the pixel's reached the collector, the server's was answered 2xx.
    expect(posted.get(orderEventId(KEY, numeric(order)))).toBe(2)
    expect(server.stats()).toMatchObject({ sent: 1, queued: 0 })
    expect(purchasesOf(numeric(order))).toHaveLength(1)
    await context.close()
  })

  it('keeps the purchase through a collector outage at checkout; the next page sends it, once', async () => {
    const { context, page, uid } = await shopper()
    const order = newOrder()
    collectorDown = true
    try {
      await checkoutPage(page)
      const refusedBefore = refusedPosts
      await publish(page, 'checkout_completed', checkoutCompleted(order))
      // Kept in the shop's storage, through the Standard API, for the next page.
      let kept: string[] = []
      for (let tries = 0; tries < 100 && !kept.length; tries++) {
        kept = await keptKeys(page)
        await sleep(50)
      }
      expect(kept).toHaveLength(1)
      expect(kept[0].endsWith('_' + orderEventId(KEY, numeric(order)))).toBe(true)
      await waitFor(() => refusedPosts > refusedBefore, 'a try while the collector is down', 10000)
      await leave(page)
      // A retry that left just before the page went still arrives: the collector stays down until
      // half a second passes without one.
      await whenQuiet(() => refusedPosts, 500)
    } finally {
      collectorDown = false
    }
    expect(purchasesOf(numeric(order))).toEqual([])
    // The shopper's next page on the shop, with the pixel.
    await storefrontWithPixel(page, '/')
    await waitFor(() => purchasesOf(numeric(order)).length == 1, 'the kept purchase', 10000)
    await untilAnswered(page)
    expect(posted.get(orderEventId(KEY, numeric(order)))).toBe(1)
    expect(purchasesOf(numeric(order))).toHaveLength(1)
    expect(purchasesOf(numeric(order))[0].user.uid).toBe(uid)
    expect(await keptKeys(page)).toEqual([])
    await context.close()
  })

  it('a shopper who leaves before the collector answered: the next page sends the purchase again, stored once', async () => {
    const { context, page, uid } = await shopper()
    const order = newOrder()
    answerDelay = 3000
    try {
      await checkoutPage(page)
      await publish(page, 'checkout_completed', checkoutCompleted(order))
      await waitFor(() => purchasesOf(numeric(order)).length == 1, 'the purchase stored', 10000)
      // Stored, but the answer has not reached the pixel: its copy is still kept.
      expect(await keptKeys(page)).toHaveLength(1)
      await leave(page)
    } finally {
      answerDelay = 0
    }
    await storefrontWithPixel(page, '/')
    await waitFor(() => posted.get(orderEventId(KEY, numeric(order))) == 2, 'the purchase sent again', 10000)
    await untilAnswered(page)
    // Sent twice, as nothing can tell the second page that the first request arrived; its event
    // id lets the collector store it once.
    expect(purchasesOf(numeric(order))).toHaveLength(1)
    expect(purchasesOf(numeric(order))[0].user.uid).toBe(uid)
    await context.close()
  })
})
