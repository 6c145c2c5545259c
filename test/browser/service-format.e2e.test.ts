// @vitest-environment node
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { launch, leave, startPages, STUB, watch, whenQuiet } from '../support/harness'
import { startServiceStandIn, type StoredEvent } from '../support/service-stand-in'
import { waitFor } from '../support/wait'

/*
 * The script tag with data-format="spec", in Chromium, straight to a stand-in of the service
 * that takes exactly one SPEC envelope per request and refuses anything else (a batch, an
 * event_id, a missing key). These events carry no event_id, so each is told apart by a
 * property of its own (item_id, order_id, or the page's URL and the order it was viewed in),
 * and must arrive exactly once.
 */

let browser: Browser
let context: BrowserContext
let pages: Awaited<ReturnType<typeof startPages>>
let service: Awaited<ReturnType<typeof startServiceStandIn>>

/** A page of the shop: the script tag in SPEC format and helpers that track by script. */
const shop = (title: string, attributes = '') =>
  STUB +
  `<script async src="/discovery-feedback.min.js" data-key="KEY" data-endpoint="${service.url}" data-format="spec" ${attributes}></script>` +
  `<title>${title}</title>` +
  '<script>window.clicks = (prefix, count) => { for (let i = 0; i < count; i++) discoveryFeedback("click-item", { item_id: prefix + "-" + i, variant_item_id: "v" }) }</script>'

const open = async (page: Page, path: string) => {
  await page.goto(pages.origin + path)
  await page.waitForFunction(() => (window as any).discoveryFeedback.tracker)
}
const clicks = (page: Page, prefix: string, count: number) => page.evaluate(([p, n]) => (window as any).clicks(p, n), [prefix, count] as const)
const stats = (page: Page) => page.evaluate(() => (window as any).discoveryFeedback.tracker.stats())
const ids = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => prefix + '-' + i)

/** What tells an event apart, as the stand-in stored it. */
const identity = (event: StoredEvent) => {
  const properties = event.properties as Record<string, string>
  if (event.event == 'view-page') return 'view ' + new URL(properties.url).pathname + new URL(properties.url).search
  if (event.event == 'purchase') return 'purchase ' + properties.order_id
  if (event.event == 'update-cart') return 'update-cart'
  return event.event + ' ' + properties.item_id
}
const stored = () => service.events.map(identity)
const clickIds = () =>
  service.events
    .filter((event) => event.event == 'click-item')
    .map((event) => event.properties.item_id as string)
    .sort()

/** Waits until `count` events are stored and nothing more arrives for a while (a late duplicate would). */
const untilStored = async (count: number, timeout = 15000) => {
  await waitFor(() => service.events.length >= count, count + ' stored events', timeout)
  await whenQuiet(() => service.requests(), 500)
}

beforeAll(async () => {
  ;[browser, pages] = await Promise.all([launch(), startPages()])
})
afterAll(async () => {
  await browser?.close()
  await pages?.close()
})
beforeEach(async () => {
  service = await startServiceStandIn({ keys: ['KEY'], accept: 'header-or-query', cors: true })
  context = await browser.newContext()
})
afterEach(async () => {
  await context.close()
  await service.close()
})

describe("data-format='spec' in Chromium, straight to the service", () => {
  it('a walk over four pages: view-pages, clicks, add-to-cart, purchase, each once, one request each, no preflight', async () => {
    pages.page('/home', shop('home'))
    pages.page('/product', shop('product'))
    pages.page('/cart', shop('cart'))
    pages.page('/thanks', shop('thanks'))
    const page = await context.newPage()
    const seen = watch(page)
    await open(page, '/home')
    await page.evaluate(() => (window as any).discoveryFeedback('click-item', { rid: 'r-1', item_id: 'shoe', variant_item_id: 'shoe-42' }))
    await open(page, '/product')
    await page.evaluate(() => (window as any).discoveryFeedback('add-to-cart', { rid: 'r-2', item_id: 'sock', variant_item_id: 'sock-1', quantity: 2 }))
    await open(page, '/cart')
    await page.evaluate(() =>
      (window as any).discoveryFeedback('update-cart', { line_items: [{ item_id: 'sock', variant_item_id: 'sock-1', unit_price: 5, quantity: 2 }] })
    )
    await open(page, '/thanks')
    await page.evaluate(() =>
      (window as any).discoveryFeedback('purchase', {
        order_id: 'order-1',
        currency: 'EUR',
        revenue: 10,
        line_items: [{ item_id: 'sock', variant_item_id: 'sock-1', unit_price: 5, quantity: 2 }]
      })
    )
    await leave(page)
    const expected = [
      'view /home',
      'click-item shoe',
      'view /product',
      'click-item sock',
      'add-to-cart sock',
      'view /cart',
      'update-cart',
      'view /thanks',
      'purchase order-1'
    ]
    await untilStored(expected.length)
    await page.close()
    expect(service.refused).toEqual([])
    expect(stored().sort()).toEqual(expected.sort())
    // One request per event: no batch, no preflight, nothing sent twice.
    expect(service.requests()).toBe(expected.length)
    // One shopper, one session, on every event; the key in the body, as the query had it.
    expect(new Set(service.events.map((event) => event.user.uid + '/' + event.user.sid)).size).toBe(1)
    expect(service.events.every((event) => event.key == 'KEY')).toBe(true)
    expect(seen.pageErrors).toEqual([])
  })

  it('60 clicks and then leaving at once: all arrive, by beacon, each once', async () => {
    // Nothing leaves while the page is open: a minute's interval and no batch size reached.
    pages.page('/burst', shop('burst', 'data-auto-view-page="false" data-flush-interval="60000" data-max-batch-events="1000"'))
    await context.addInitScript(() => {
      const w = window as any
      w.__fetches = 0
      const original = window.fetch
      window.fetch = function (this: unknown, ...args: Parameters<typeof fetch>) {
        w.__fetches++
        return original.apply(this, args)
      } as typeof fetch
    })
    const page = await context.newPage()
    await open(page, '/burst')
    await clicks(page, 'burst', 60)
    expect(await page.evaluate(() => (window as any).__fetches)).toBe(0)
    expect(service.requests()).toBe(0)
    await leave(page)
    await untilStored(60)
    await page.close()
    expect(service.refused).toEqual([])
    expect(clickIds()).toEqual(ids('burst', 60).sort())
    expect(service.requests()).toBe(60)
  })

  it('an outage over two pages: nothing is lost or sent twice, and the next page delivers it all', async () => {
    pages.page('/shop', shop('shop'))
    pages.page('/again', shop('again'))
    service.down(true)
    const page = await context.newPage()
    await open(page, '/shop')
    await clicks(page, 'down', 10)
    // The page has heard the service fail, so it knows not to beacon into the outage.
    await waitFor(async () => (await stats(page)).retried > 0, 'a failed request', 10000)
    await page.reload()
    await page.waitForFunction(() => (window as any).discoveryFeedback.tracker)
    await clicks(page, 'reloaded', 5)
    await waitFor(async () => (await stats(page)).retried > 0, 'a failed request on the reloaded page', 10000)
    expect(service.events).toEqual([])
    // Together, so that every request counted here was answered 503, and none after.
    const triedWhileDown = service.requests()
    service.down(false)
    await open(page, '/again')
    // Two view-pages of /shop (the first visit and the reload), one of /again, 15 clicks.
    await untilStored(18)
    await leave(page)
    await whenQuiet(() => service.requests(), 500)
    await page.close()
    expect(service.refused).toEqual([])
    expect(clickIds()).toEqual([...ids('down', 10), ...ids('reloaded', 5)].sort())
    expect(
      stored()
        .filter((event) => event.startsWith('view'))
        .sort()
    ).toEqual(['view /again', 'view /shop', 'view /shop'])
    expect(service.events).toHaveLength(18)
    // The outage cost retries, but each event was stored by one request.
    expect(triedWhileDown).toBeGreaterThan(0)
    expect(service.requests() - triedWhileDown).toBe(18)
  })
})
