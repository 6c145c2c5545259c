// @vitest-environment node
import { mkdirSync, mkdtempSync, readFileSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, BrowserContext } from 'playwright-core'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
// @ts-expect-error plain ES module without types
import { startDemo } from '../../demo/server.mjs'
import type { Envelope } from '../../src/index'
import { launch, leave, watch } from '../support/harness'
import { sleep, waitFor } from '../support/wait'

const catalog = JSON.parse(readFileSync('demo/catalog.json', 'utf8'))

// `UPDATE_SCREENSHOTS=1 npm test` refreshes the README's pictures.
const SHOTS = process.env.UPDATE_SCREENSHOTS ? 'docs/images' : 'test-results'

let browser: Browser
let context: BrowserContext
let demo: { url: string; inspectorUrl: string; close: () => Promise<void> }
let file: string

const stored = (): (Envelope & { received_at: number })[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line))

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true })
  mkdirSync('test-results', { recursive: true })
  browser = await launch()
})
afterAll(async () => {
  await browser?.close()
})
beforeEach(async (test) => {
  await demo?.close()
  file = join(mkdtempSync(join(tmpdir(), 'demo-')), 'events.ndjson')
  demo = await startDemo({ port: 0, dataFile: file })
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
  test.onTestFinished(() => context.close())
})
afterAll(async () => {
  await demo?.close()
})

describe('demo store in Chromium', () => {
  it('walk home → product → cart → checkout: every event stored, one uid and one sid', async () => {
    const page = await context.newPage()
    const seen = watch(page)
    await page.goto(demo.url + '/')
    await page.screenshot({ path: join(SHOTS, 'store.png') })
    await page.click('a.tile[data-item-id="1003"]')
    await page.waitForURL(/\/product\/1003$/)
    await page.selectOption('#variant', '1003-42')
    await page.click('#add')
    // The cart's shelf is a recommendation store: bought together with the cart's items.
    const shelfAnswer = page.waitForResponse((response) => response.url().endsWith('/v3/recommend/items/1003/bought/bought'))
    await page.click('header a[href="/cart"]')
    await page.waitForURL(/\/cart$/)
    const { meta, items } = await (await shelfAnswer).json()
    const rid = meta.rid
    const [shelfItem, shelfVariant] = [items[0].id, items[0].variants_ids[0]]
    await page.click(`#shelf .tile[data-item-id="${shelfItem}"] button.shelf-add`)
    await page.click('#checkout')
    await page.waitForURL(/\/order\//)
    const orderId = await page.textContent('#order-id')
    await leave(page)
    await waitFor(() => stored().some((event) => event.event == 'purchase'), 'the purchase', 10000)
    await sleep(500)
    const events = stored()
    const names = events.map((event) => event.event)
    expect(names.filter((name) => name == 'view-page')).toHaveLength(4)
    expect(new Set(events.map((event) => event.user.uid)).size).toBe(1)
    expect(new Set(events.map((event) => event.user.sid)).size).toBe(1)
    const props = (name: string) => events.filter((event) => event.event == name).map((event) => event.properties)
    expect(props('view-page').map((view: any) => [new URL(view.url).pathname, view.item_id])).toEqual([
      ['/', undefined],
      ['/product/1003', '1003'],
      ['/cart', undefined],
      ['/order/' + orderId, undefined]
    ])
    expect(props('click-item')).toEqual([
      { item_id: '1003', variant_item_id: '1003-38' },
      { rid, item_id: shelfItem, variant_item_id: shelfVariant }
    ])
    expect(props('add-to-cart')).toEqual([{ item_id: shelfItem, variant_item_id: shelfVariant, quantity: 1, rid }])
    const price = (id: string) => catalog.find((product: { id: string }) => product.id == id).price
    const line42 = { item_id: '1003', variant_item_id: '1003-42', unit_price: price('1003'), quantity: 1 }
    const shelfLine = { item_id: shelfItem, variant_item_id: shelfVariant, unit_price: price(shelfItem), quantity: 1 }
    const revenue = Math.round((line42.unit_price + shelfLine.unit_price) * 100) / 100
    expect(revenue).toBeGreaterThanOrEqual(50) // free shipping
    expect(props('update-cart')).toEqual([{ line_items: [line42] }, { line_items: [line42] }, { line_items: [line42, shelfLine] }])
    expect(props('purchase')).toEqual([
      { order_id: orderId, currency: 'EUR', revenue, total_tax: Math.round((revenue * 19) / 1.19) / 100, total_shipping: 0, line_items: [line42, shelfLine] }
    ])
    expect(seen.pageErrors).toEqual([])
  })

  it('SPA: one view-page per route, the previous URL as ref', async () => {
    const page = await context.newPage()
    await page.goto(demo.url + '/spa')
    await page.waitForFunction(() => (window as any).tracker)
    for (const route of ['new', 'sale', 'about']) {
      await page.click(`a[data-route][href="/spa/${route}"]`)
      await sleep(50)
    }
    await page.goBack({ waitUntil: 'commit' })
    await leave(page)
    await waitFor(() => stored().length >= 5, 'five view-pages', 10000)
    await sleep(300)
    expect(stored().map((event) => [event.event, new URL(event.properties.url!).pathname, new URL(event.properties.ref! || 'x:/').pathname])).toEqual([
      ['view-page', '/spa', '/'],
      ['view-page', '/spa/new', '/spa'],
      ['view-page', '/spa/sale', '/spa/new'],
      ['view-page', '/spa/about', '/spa/sale'],
      ['view-page', '/spa/sale', '/spa/about']
    ])
  })

  it('the inspector shows an event as it arrives, pushed to the page already open', async () => {
    const inspector = await context.newPage()
    await inspector.setViewportSize({ width: 390, height: 844 })
    // The printed URL trades its token for a cookie and lands on the plain /inspector.
    await inspector.goto(demo.inspectorUrl)
    expect(new URL(inspector.url()).pathname + new URL(inspector.url()).search).toBe('/inspector')
    await inspector.waitForSelector('#status:text("live")')
    // A mark on this document: a reload would lose it. The event must come to this page.
    await inspector.evaluate(() => ((window as any).openedBefore = true))
    expect(await inspector.$('#events li[data-event="update-cart"]')).toBeNull()
    const shop = await context.newPage()
    await shop.goto(demo.url + '/product/1010')
    await shop.click('#add')
    await shop.evaluate(() => (window as any).discoveryFeedback('flush'))
    await waitFor(() => stored().some((event) => event.event == 'update-cart'), 'the update-cart', 10000)
    await inspector.waitForSelector('#events li[data-event="update-cart"]', { timeout: 10000 })
    expect(await inspector.evaluate(() => (window as any).openedBefore)).toBe(true)
    expect(await inspector.textContent('#counts [data-count="update-cart"] b')).toBe('1')
    // A rejected envelope is shown with its error.
    await fetch(demo.url + '/v3/feedback', { method: 'POST', body: JSON.stringify([{ event: 'click-item', key: 'demo-key' }]) })
    await inspector.waitForSelector('#events li[data-type="rejected"] .error', { timeout: 10000 })
    expect(await inspector.textContent('#events li[data-type="rejected"] .error')).toContain('click-item: properties must be an object')
    // README's picture of the inspector comes from test/collector/inspector.e2e.test.ts.
    await inspector.screenshot({ path: join('test-results', 'inspector-feed.png') })
    expect(statSync(join('test-results', 'inspector-feed.png')).size).toBeGreaterThan(5000)
  })

  it('the inspector shows a rejected envelope whatever type its fields have', async () => {
    const inspector = await context.newPage()
    const seen = watch(inspector)
    await inspector.goto(demo.inspectorUrl)
    await inspector.waitForSelector('#status:text("live")')
    // String() of {"toString":1} throws: such a uid or rid once stopped the page from showing anything.
    const hostile = { toString: 1 }
    const envelope = { event: 'click-item', key: 'demo-key', t_client: 1, properties: { rid: hostile, item_id: 42 }, user: { uid: hostile, sid: hostile } }
    await fetch(demo.url + '/v3/feedback', { method: 'POST', body: JSON.stringify([envelope]) })
    await inspector.waitForSelector('#events li[data-type="rejected"]', { timeout: 10000 })
    expect(await inspector.textContent('#events li[data-type="rejected"] .error')).toMatch(/^click-item: rid must be/)
    expect(await inspector.textContent('#events li[data-type="rejected"] .top')).toContain('uid (object)')
    // The page itself holds up too, whatever a feed brings.
    await inspector.evaluate((hostile) => {
      ;(window as any).show({
        type: 'rejected',
        error: hostile,
        envelope: { event: hostile, user: { uid: hostile, sid: [hostile] }, properties: { rid: hostile } }
      })
    }, hostile)
    expect(await inspector.locator('#events li[data-type="rejected"]').count()).toBe(2)
    expect(await inspector.textContent('#events li[data-type="rejected"] .top')).toContain('uid {"toStri…')
    expect(await inspector.textContent('#events li[data-type="rejected"] .top')).toContain('rid {"toString":1}')
    expect(seen.pageErrors).toEqual([])
  })
})
