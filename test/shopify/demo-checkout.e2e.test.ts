// @vitest-environment node
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
// @ts-expect-error plain ES module without types
import { startDemo } from '../../demo/server.mjs'
import type { Envelope } from '../../src/index'
import { launch, leave, watch } from '../support/harness'
import { sleep, waitFor } from '../support/wait'

let browser: Browser
let demo: { url: string; close: () => Promise<void> }
let file: string

const stored = (): Envelope[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line))

beforeAll(async () => {
  file = join(mkdtempSync(join(tmpdir(), 'shopify-demo-')), 'events.ndjson')
  ;[browser, demo] = await Promise.all([launch(), startDemo({ port: 0, dataFile: file })])
})
afterAll(async () => {
  await browser?.close()
  await demo?.close()
})

describe("the demo's Shopify-style checkout in Chromium", () => {
  it('the thank-you page runs no storefront script; the custom pixel sends the purchase with the storefront shopper', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    const seen = watch(page)
    await page.goto(demo.url + '/product/1003')
    await page.click('#add')
    await page.click('header a[href="/cart"]')
    await page.waitForURL(/\/cart$/)
    await page.click('#checkout-shopify')
    await page.waitForURL(/\/checkouts\/cn\/[\w-]+\/thank-you$/)
    const orderId = (await page.textContent('#order-id'))!
    expect(orderId).toMatch(/^gid:\/\/shopify\/OrderIdentity\/\d+$/)
    // Like Shopify's thank-you page, it has no storefront tracker; the pixel is in a sandboxed iframe.
    expect(await page.evaluate(() => typeof (window as any).discoveryFeedback)).toBe('undefined')
    expect(await page.getAttribute('iframe', 'sandbox')).toBe('allow-scripts')
    await waitFor(() => stored().some((event) => event.event == 'purchase'), 'the purchase', 10000)
    await leave(page)
    await sleep(300)
    const events = stored()
    const purchase = events.find((event) => event.event == 'purchase')!
    const price = JSON.parse(readFileSync('demo/catalog.json', 'utf8')).find((product: { id: string }) => product.id == '1003').price
    expect(purchase.properties).toMatchObject({
      order_id: orderId.split('/').pop(),
      currency: 'EUR',
      revenue: price,
      line_items: [{ item_id: '1003', variant_item_id: '1003-38', unit_price: price, quantity: 1 }]
    })
    // The pixel reads the storefront's uid through browser.cookie, so the purchase joins the shopper's session.
    const product = events.find((event) => event.event == 'view-page')!
    expect(purchase.user.uid).toBe(product.user.uid)
    expect(seen.pageErrors).toEqual([])
    await context.close()
  })
})
