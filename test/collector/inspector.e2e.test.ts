// @vitest-environment node
import { mkdirSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
// @ts-expect-error plain ES module without types
import { startDemo } from '../../demo/server.mjs'
import { launch, leave, watch } from '../support/harness'
import { sleep, waitFor } from '../support/wait'

// The inspector as an integrator uses it: a shopper's walk through the demo store stays free of
// lints and fills the charts; crafted mistakes then show beside their events and in the counts.
// This test draws the README's picture of it (see SHOT).
// `UPDATE_SCREENSHOTS=1 npm test` refreshes the README's picture; otherwise it goes to test-results.
const SHOT = process.env.UPDATE_SCREENSHOTS ? 'docs/images/inspector.png' : 'test-results/inspector.png'

let browser: Browser
let demo: { url: string; inspectorUrl: string; collector: { counts: { accepted: number } }; close: () => Promise<void> }

beforeAll(async () => {
  mkdirSync(dirname(SHOT), { recursive: true })
  browser = await launch()
  demo = await startDemo({ port: 0, dataFile: join(mkdtempSync(join(tmpdir(), 'inspector-')), 'events.ndjson') })
})
afterAll(async () => {
  await browser?.close()
  await demo?.close()
})

/** The funnel rows as the chart writes them: label, then the four counts. */
const funnelRows = (page: import('playwright-core').Page) =>
  page.$$eval('#funnel g[data-session]', (rows) => rows.map((row) => [...row.querySelectorAll(':scope > text')].map((text) => text.textContent)))
/** Whether the funnel's rows show these counts (pages, clicks, adds, purchases), the session names aside. */
const funnelShows = async (page: import('playwright-core').Page, counts: string[][]) =>
  JSON.stringify((await funnelRows(page)).map((row) => row.slice(1))) == JSON.stringify(counts)
const clickThrough = (page: import('playwright-core').Page) =>
  page.$$eval('#ctr g[data-family]', (rows) => rows.map((row) => [row.getAttribute('data-family'), row.querySelectorAll('text')[1].textContent]))

describe('the inspector as an integration debugger, in Chromium', () => {
  it('stays quiet on a clean walk of the demo store, charts it, and lints crafted mistakes', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 })
    const shop = await context.newPage()
    const shopSeen = watch(shop)
    // Home → autocomplete (a suggestion, then an item) → product → cart → a shelf's add-to-cart → checkout.
    await shop.goto(demo.url + '/')
    await shop.fill('#search', 'shirt')
    await shop.waitForSelector('#results button.suggestion')
    const again = shop.waitForResponse((response) => response.url().endsWith('/v3/autocomplete'))
    await shop.click('#results button.suggestion >> nth=0')
    await again
    await sleep(100)
    await shop.click('#results a[data-df-item-id] >> nth=0')
    await shop.waitForURL(/\/product\//)
    await shop.click('#add')
    const shelf = shop.waitForResponse((response) => response.url().includes('/bought/bought'))
    await shop.click('header a[href="/cart"]')
    await shelf
    await shop.click('#shelf button.shelf-add >> nth=0')
    await shop.click('#checkout')
    await shop.waitForURL(/\/order\//)
    await leave(shop)
    expect(shopSeen.pageErrors).toEqual([])

    const inspector = await context.newPage()
    const seen = watch(inspector)
    await inspector.goto(demo.inspectorUrl)
    await inspector.waitForSelector('#status:text("live")')
    await inspector.waitForSelector('#events li[data-event="purchase"]', { timeout: 10000 })
    await waitFor(() => demo.collector.counts.accepted >= 12, 'the walk', 10000)
    // The charts are redrawn at most every 250 ms: the walk's last events may come after the first drawing.
    await waitFor(() => funnelShows(inspector, [['4', '3', '1', '1']]), 'the funnel of the whole walk', 10000)
    // Clean: no lint anywhere, on events or in the header.
    expect(await inspector.locator('#events li[data-linted]').count()).toBe(0)
    expect(await inspector.getAttribute('#lint-total', 'class')).toBe('clean')
    expect(await inspector.textContent('#lint-total')).toBe('No lints0')
    // One session: 4 pages, 2 autocomplete clicks + the shelf's click-item, 1 add-to-cart, 1 purchase.
    expect(await funnelRows(inspector)).toEqual([[expect.stringMatching(/^sid /), '4', '3', '1', '1']])
    // The product page's button sent update-cart, not counted: the funnel says why.
    expect(await inspector.textContent('#funnel-note')).toMatch(/product page's own button .* sends update-cart/)
    const rates = Object.fromEntries(await clickThrough(inspector))
    expect(rates.autocomplete).toMatch(/^2\/\d+ · \d+ %$/)
    expect(rates.recommendation).toMatch(/^1\/\d+ · \d+ %$/)
    expect(rates.search).toBe('0 clicks')

    // Crafted mistakes from a second session, one per lint, as a broken integration sends them.
    const now = Date.now()
    const user = { uid: 'staging-uid', sid: 'staging-sid' }
    const envelope = (event: string, properties: object, more = {}) => ({
      event,
      properties,
      key: 'demo-key',
      t_client: now,
      user,
      event_id: event + Math.random(),
      ...more
    })
    const duplicate = envelope('view-page', { url: 'http://staging.example/', ref: '', width: 390, height: 844 })
    await fetch(demo.url + '/v3/feedback?t_sent=' + now, {
      method: 'POST',
      body: JSON.stringify([
        duplicate,
        duplicate,
        envelope('view-page', { url: 'http://staging.example/products/blue-shirt', ref: '', width: 390, height: 844 }),
        envelope('click-item', { rid: 's-00000000-0000-4000-8000-000000000000', item_id: '1001', variant_item_id: '1001-40' }),
        envelope('add-to-cart', { rid: 's-00000000-0000-4000-8000-000000000000', item_id: '1002', variant_item_id: '1002-40', quantity: 1 }),
        envelope('purchase', {
          order_id: 'o-9',
          currency: 'EUR',
          revenue: 8990,
          total_shipping: 0,
          line_items: [{ item_id: '1002', variant_item_id: '1002-40', unit_price: 89.9, quantity: 1 }]
        }),
        { event: 'click-item', key: 'demo-key', t_client: now, user, properties: { item_id: 42 } }
      ])
    })
    await fetch(demo.url + '/v3/feedback', {
      method: 'POST',
      body: JSON.stringify([envelope('view-page', { url: 'http://staging.example/cart', ref: '', width: 390, height: 844 }, { t_client: now - 3600000 })])
    })
    await inspector.waitForSelector('#events li[data-lint="clock-skew"]')
    await inspector.waitForSelector('#lints [data-lint="clock-skew"]')
    const lintsOn = (event: string) =>
      inspector.$$eval(`#events li[data-event="${event}"] ul.lints li`, (notes) => notes.map((note) => note.getAttribute('data-lint')))
    expect(await lintsOn('add-to-cart')).toEqual(['rid-unknown', 'cart-without-click'])
    expect(await lintsOn('purchase')).toEqual(['revenue'])
    // Node's fetch says `node`, a bot's agent: the collector keeps its events, and the inspector marks them.
    expect(await inspector.textContent('#events li[data-event="purchase"][data-bot] .bot')).toBe('bot')
    expect(await inspector.textContent('#events li[data-event="purchase"] ul.lints li')).toBe(
      '⚠ revenue 8990.00 is far from line items 89.90 + shipping 0.00 − discount 0.00 = 89.90'
    )
    const counted = await inspector.$$eval('#lints span[data-lint]', (badges) =>
      badges.map((badge) => [badge.getAttribute('data-lint'), badge.querySelector('b')!.textContent])
    )
    expect(Object.fromEntries(counted)).toEqual({
      duplicate: '1',
      'product-view': '1',
      'rid-unknown': '2',
      'cart-without-click': '1',
      revenue: '1',
      rejected: '1',
      'clock-skew': '1'
    })
    expect(await inspector.textContent('#lint-total b')).toBe('8')
    await waitFor(
      () =>
        funnelShows(inspector, [
          ['3', '1', '1', '1'],
          ['4', '3', '1', '1']
        ]),
      'the funnel of both sessions',
      10000
    )
    expect(await funnelRows(inspector)).toEqual([
      [expect.stringMatching(/^sid staging/), '3', '1', '1', '1'],
      [expect.stringMatching(/^sid /), '4', '3', '1', '1']
    ])
    await inspector.evaluate(() => scrollTo(0, 0))
    await inspector.screenshot({ path: SHOT })
    // The page drew all of it under its CSP: a blocked script or style shows as a console error.
    expect(seen.pageErrors).toEqual([])
    expect(seen.consoleErrors).toEqual([])
    await context.close()
  })
})
