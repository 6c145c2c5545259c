// @vitest-environment node
import { createServer, type Server } from 'node:http'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Envelope } from '../../../src/index'
import { ENGINES, FACTS, launchEngine, type Engine, type EnginePage } from '../../support/engines'
import { IMPORT_MAP, startDemoCollector, startPages, STUB, whenQuiet } from '../../support/harness'
import { waitFor } from '../../support/wait'

// The GA4 data-layer bridge in Chromium, Firefox ESR and WebKitGTK: pages that push GA4
// e-commerce events as Google documents them, in both forms (dataLayer.push({ event,
// ecommerce }) and gtag's arguments), before the add-on loads and after. What the reference
// collector (src/collector/) stored is asserted: SPEC's events, valid (the collector refuses
// invalid ones), each once.

type Collector = Awaited<ReturnType<typeof startDemoCollector>>

// A discovery service that answers every search with one response: rid s-rid-1, items SKU-1 and SKU-2.
async function startDiscovery() {
  const server: Server = createServer((request, response) => {
    const headers = { 'access-control-allow-origin': '*', 'access-control-allow-headers': 'content-type, x-key', 'content-type': 'application/json' }
    if (request.method == 'OPTIONS') return void response.writeHead(204, headers).end()
    request
      .resume()
      .on('end', () => response.writeHead(200, headers).end(JSON.stringify({ meta: { rid: 's-rid-1' }, items: [{ id: 'SKU-1' }, { id: 'SKU-2' }] })))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, close: () => new Promise((resolve) => server.close(resolve)) }
}

// GA4's items, as Google's e-commerce guide shapes them.
const SHIRT = { item_id: 'SKU-1', item_name: 'Shirt', price: 20, quantity: 1, discount: 5 }
const SOCKS = { item_id: 'SKU-2', item_name: 'Socks', price: 4.5, quantity: 2 }
const ORDER = { transaction_id: 'T-1001', currency: 'EUR', value: 29, tax: 5.51, shipping: 4.9, items: [SHIRT, SOCKS] }

// Before anything of ours: the page's data layer and gtag, and a record of what reaches the console's errors.
const HEAD =
  '<script>window.reported = []; const error = console.error; console.error = (...args) => { reported.push(String(args[0])); error.apply(console, args) };' +
  'window.dataLayer = window.dataLayer || []; function gtag(){ dataLayer.push(arguments) }</script>'

describe.each(ENGINES)('GA4 data layer in %s', (name) => {
  let engine: Engine
  let pages: Awaited<ReturnType<typeof startPages>>
  let discovery: Awaited<ReturnType<typeof startDiscovery>>
  let collector: Collector
  const opened: EnginePage[] = []

  /**
   * A shop page as the README has it: the stub, the tracker's tag (async, held back so that the
   * add-on starts before it), the data-layer add-on, then `body`. `pushes` run before the add-on loads.
   */
  const shop = (pushes: string, body = '', trackerDelay = 300) =>
    HEAD +
    `<script>${pushes}</script>` +
    STUB +
    `<script async src="/discovery-feedback.min.js?delay=${trackerDelay}" data-key="KEY" data-endpoint="${collector.url}"></script>` +
    `<script src="/discovery-feedback-datalayer.min.js"></script>` +
    body

  beforeAll(async () => {
    ;[engine, pages, discovery] = await Promise.all([launchEngine(name), startPages(), startDiscovery()])
  }, 60000)
  afterAll(async () => {
    await Promise.all(opened.splice(0).map((page) => page.close().catch(() => {})))
    await engine?.close()
    await pages?.close()
    await discovery?.close()
  }, 60000)
  beforeEach(async () => {
    collector = await startDemoCollector()
  })
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((page) => page.close().catch(() => {})))
    await collector.close()
  })

  const open = async () => {
    const page = await engine.newPage()
    opened.push(page)
    return page
  }
  /** Goes to `path` and waits for the tracker. */
  const visit = async (page: EnginePage, path: string) => {
    await page.goto(pages.origin + path)
    await page.waitForFunction('window.discoveryFeedback && discoveryFeedback.tracker')
  }
  /** Sends what is queued, and waits until nothing more arrives. */
  const flushed = async (page: EnginePage, tracker = 'discoveryFeedback.tracker') => {
    await page.evaluate(tracker + '.flush()')
    await whenQuiet(() => collector.posts() + collector.stored().length, 500, 15000)
  }
  const stored = (event: string) => collector.stored().filter((envelope: Envelope) => envelope.event == event)
  const properties = (event: string) => stored(event).map((envelope) => envelope.properties as Record<string, unknown>)

  it('a walk: listing, cart, product, thank-you page twice; each SPEC event once, rids filled in, faults reported', async () => {
    pages.page(
      '/list',
      shop(
        `dataLayer.push({ event: 'view_item_list', ecommerce: { items: [${JSON.stringify(SHIRT)}] } })`,
        `<script src="/discovery-feedback-client.min.js"></script>` +
          `<script>window.discovery = discoveryFeedbackClient.createClient({ key: 'KEY', baseUrl: '${discovery.url}' })</script>`
      )
    )
    pages.page('/cart', shop(`gtag('event', 'view_cart', { currency: 'EUR', value: 15, items: [${JSON.stringify(SHIRT)}] })`))
    pages.page(
      '/products/socks',
      shop(`dataLayer.push({ ecommerce: null }); dataLayer.push({ event: 'view_item', ecommerce: { items: [${JSON.stringify(SOCKS)}] } })`)
    )
    pages.page('/thank-you', shop(`dataLayer.push({ ecommerce: null }); dataLayer.push({ event: 'purchase', ecommerce: ${JSON.stringify(ORDER)} })`))

    const page = await open()
    // A search answered by the discovery service, then two clicks pushed after the add-on
    // loaded: one on an item the response showed, one on an item it did not.
    await visit(page, '/list')
    await page.evaluate(`discovery.searchContent({ q: 'shirt' }).then(() => {
      dataLayer.push({ event: 'select_item', ecommerce: { item_list_id: 'search', items: [${JSON.stringify(SHIRT)}] } })
      gtag('event', 'select_item', { items: [{ item_id: 'SKU-9', item_name: 'Hat' }] })
    })`)
    await visit(page, '/cart')
    await visit(page, '/products/socks')
    // After the add-on loaded: an add in gtag's form, then one push that holds a malformed
    // click and a valid add after it.
    await page.evaluate(`gtag('event', 'add_to_cart', { currency: 'EUR', value: 9, items: [${JSON.stringify(SOCKS)}] })`)
    const threw = await page.evaluate(`(() => { try {
      dataLayer.push({ event: 'select_item', ecommerce: { items: 'none' } },
                     { event: 'add_to_cart', ecommerce: { items: [${JSON.stringify({ ...SHIRT, quantity: 1 })}] } })
      return false } catch { return true } })()`)
    expect(threw).toBe(false)
    expect(await page.evaluate('reported')).toEqual(['discovery-feedback: select_item: items must be a non-empty array, got string'])
    await flushed(page)
    // The confirmation page, visited twice: its purchase pushed twice, and tracked directly too.
    await visit(page, '/thank-you')
    await flushed(page)
    await visit(page, '/thank-you')
    await page.evaluate(`discoveryFeedback('purchase', { order_id: 'T-1001', currency: 'EUR', revenue: 39.41, line_items: [] })`)
    await flushed(page)
    // WebKit's driver reports no page errors at all (engines.ts): there, an empty list proves nothing.
    if (FACTS[name].pageErrors) expect(page.pageErrors).toEqual([])

    expect(properties('click-item')).toEqual([
      { rid: 's-rid-1', item_id: 'SKU-1', variant_item_id: 'SKU-1' },
      { item_id: 'SKU-9', variant_item_id: 'SKU-9' }
    ])
    const line = (item: typeof SHIRT | typeof SOCKS, quantity: number) => ({
      item_id: item.item_id,
      variant_item_id: item.item_id,
      unit_price: item.price,
      quantity
    })
    expect(properties('update-cart').map((cart) => cart.line_items)).toEqual([
      [line(SHIRT, 1)],
      [line(SHIRT, 1), line(SOCKS, 2)],
      [line(SHIRT, 2), line(SOCKS, 2)]
    ])
    // Once, though pushed on two loads and tracked directly: one event id per order.
    expect(properties('purchase')).toEqual([
      {
        order_id: 'T-1001',
        currency: 'EUR',
        revenue: 39.41,
        total_tax: 5.51,
        total_shipping: 4.9,
        total_discount: 5,
        line_items: [line(SHIRT, 1), line(SOCKS, 2)]
      }
    ])
    // One view-page per page load; the product page's carries the product, and only it.
    const views = properties('view-page').map((view) => [new URL(view.url as string).pathname, view.item_id])
    expect(views).toEqual([
      ['/list', undefined],
      ['/cart', undefined],
      ['/products/socks', 'SKU-2'],
      ['/thank-you', undefined],
      ['/thank-you', undefined]
    ])
  })

  it('reloaded pages: the add a page pushes in its HTML counts once, the order is stored once', async () => {
    pages.page('/cart', shop(`dataLayer.push({ event: 'view_cart', ecommerce: { items: [${JSON.stringify(SHIRT)}] } })`))
    pages.page('/added', shop(`dataLayer.push({ event: 'add_to_cart', ecommerce: { items: [${JSON.stringify(SOCKS)}] } })`))
    pages.page('/thank-you', shop(`dataLayer.push({ event: 'purchase', ecommerce: ${JSON.stringify(ORDER)} })`))
    const page = await open()
    /** Reloads the page as the shopper's reload button does, and waits for the tracker. */
    const reload = async () => {
      await page.evaluate('window.beforeReload = true')
      await page.evaluate('setTimeout(() => location.reload())')
      await page.waitForFunction('!window.beforeReload && window.discoveryFeedback && discoveryFeedback.tracker')
    }
    await visit(page, '/cart')
    await visit(page, '/added')
    await reload()
    await flushed(page)
    // The reloaded add was skipped, not lost: an add the bridge cannot send (a cart this tab has
    // not seen) is reported on the console, and sends no update-cart either.
    const reportedOnReload = await page.evaluate('reported')
    await visit(page, '/thank-you')
    await reload()
    await flushed(page)
    expect(await page.evaluate("performance.getEntriesByType('navigation')[0].type")).toBe('reload')
    const line = (item: typeof SHIRT | typeof SOCKS, quantity: number) => ({
      item_id: item.item_id,
      variant_item_id: item.item_id,
      unit_price: item.price,
      quantity
    })
    expect(properties('update-cart').map((cart) => cart.line_items)).toEqual([[line(SHIRT, 1)], [line(SHIRT, 1), line(SOCKS, 2)]])
    expect(properties('purchase').map((order) => order.order_id)).toEqual(['T-1001'])
    expect(stored('view-page').map((view) => new URL((view.properties as { url: string }).url).pathname)).toEqual([
      '/cart',
      '/added',
      '/added',
      '/thank-you',
      '/thank-you'
    ])
    expect(reportedOnReload).toEqual([])
    expect(await page.evaluate('reported')).toEqual([])
  })

  it('script tags in either order: a view_item the add-on reads before the page view-page names it; after, it is reported and the page counted once', async () => {
    const viewItem = `dataLayer.push({ event: 'view_item', ecommerce: { items: [${JSON.stringify(SHIRT)}] } })`
    const tracker = `<script src="/discovery-feedback.min.js" data-key="KEY" data-endpoint="${collector.url}"></script>`
    // Both tags in the head, the tracker's first: the add-on runs while the page is parsed.
    pages.page('/products/in-order', HEAD + `<script>${viewItem}</script>` + tracker + '<script src="/discovery-feedback-datalayer.min.js"></script>')
    // Both tags in the head, the add-on's first and without the README's stub: it makes the stub
    // itself, and its view-page waits in the stub's queue for the tracker.
    pages.page('/products/add-on-first', HEAD + `<script>${viewItem}</script>` + '<script src="/discovery-feedback-datalayer.min.js"></script>' + tracker)
    // The add-on async and late: the tracker's view-page has gone without the product.
    pages.page(
      '/products/late',
      HEAD + `<script>${viewItem}</script>` + tracker + '<script async src="/discovery-feedback-datalayer.min.js?delay=300"></script>'
    )
    const page = await open()
    await visit(page, '/products/in-order')
    await flushed(page)
    await visit(page, '/products/add-on-first')
    await flushed(page)
    await visit(page, '/products/late')
    await page.waitForFunction('window.discoveryFeedbackDataLayer')
    await flushed(page)
    const views = properties('view-page').map((view) => [new URL(view.url as string).pathname, view.item_id])
    expect(views).toEqual([
      ['/products/in-order', 'SKU-1'],
      ['/products/add-on-first', 'SKU-1'],
      ['/products/late', undefined]
    ])
    expect(await page.evaluate('reported')).toEqual([expect.stringMatching(/^discovery-feedback: view_item: came after this page's view-page was tracked/)])
  })

  it('a module app: view_item in the same task as its route names the route view-page; a later one is reported, never doubled', async () => {
    pages.page(
      '/app',
      HEAD +
        IMPORT_MAP +
        `<script type="module">
          import { createTracker, bridgeDataLayer } from 'discovery-feedback'
          const tracker = createTracker({ key: 'KEY', endpoint: '${collector.url}' })
          bridgeDataLayer(tracker)
          window.tracker = tracker
        </script>`
    )
    const page = await open()
    await page.goto(pages.origin + '/app')
    await page.waitForFunction('window.tracker')
    // The route and its view_item together, as a router that has the product already renders it.
    await page.evaluate(`(() => { history.pushState(null, '', '/app/products/shirt'); gtag('event', 'view_item', { items: [${JSON.stringify(SHIRT)}] }) })()`)
    // A route whose product arrives later, after the tracker's automatic view of it.
    await page.evaluate(`history.pushState(null, '', '/app/products/socks')`)
    await page.evaluate(`new Promise((resolve) => setTimeout(resolve, 100))`)
    await page.evaluate(`dataLayer.push({ event: 'view_item', ecommerce: { items: [${JSON.stringify(SOCKS)}] } })`)
    await waitFor(() => stored('view-page').length >= 3, 'three view-pages', 10000).catch(() => {})
    await flushed(page, 'tracker')

    const views = properties('view-page').map((view) => [new URL(view.url as string).pathname, view.item_id])
    expect(views).toEqual([
      ['/app', undefined],
      ['/app/products/shirt', 'SKU-1'],
      ['/app/products/socks', undefined]
    ])
    expect(await page.evaluate('reported')).toEqual([expect.stringMatching(/^discovery-feedback: view_item: came after this page's view-page was tracked/)])
    if (FACTS[name].pageErrors) expect(page.pageErrors).toEqual([])
  })
})
