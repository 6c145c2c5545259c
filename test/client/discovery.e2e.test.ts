// @vitest-environment node
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, BrowserContext } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
// @ts-expect-error plain ES module without types
import { startDemo } from '../../demo/server.mjs'
import type { Envelope } from '../../src/index'
import { launch, leave, startCollector, startPages, watch } from '../support/harness'
import { sleep, waitFor } from '../support/wait'

let browser: Browser
let context: BrowserContext
let demo: { url: string; close: () => Promise<void> }
let file: string

const stored = (): Envelope[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line))

beforeAll(async () => {
  file = join(mkdtempSync(join(tmpdir(), 'discovery-')), 'events.ndjson')
  ;[browser, demo] = await Promise.all([launch(), startDemo({ port: 0, dataFile: file })])
  context = await browser.newContext()
})
afterAll(async () => {
  await browser?.close()
  await demo?.close()
})

describe('rids flow from responses into clicks, in Chromium', () => {
  it('search box: click-suggestion and click-item carry the rids the autocomplete responses returned', async () => {
    const page = await context.newPage()
    const seen = watch(page)
    await page.goto(demo.url + '/')
    await page.waitForFunction(() => (window as any).discoveryFeedback.tracker)
    const first = page.waitForResponse((response) => response.url().endsWith('/v3/autocomplete'))
    await page.fill('#search', 'shirt')
    const firstRid = (await (await first).json()).meta.rid
    await page.waitForSelector('#results .suggestion')
    const second = page.waitForResponse((response) => response.url().endsWith('/v3/autocomplete'))
    await page.click('#results .suggestion >> nth=0')
    const secondAnswer = await (await second).json()
    await page.waitForSelector(`#results a[data-df-item-id="${secondAnswer.items[0].id}"]`)
    await page.click(`#results a[data-df-item-id="${secondAnswer.items[0].id}"]`)
    await page.waitForURL(/\/product\//)
    await leave(page)
    await waitFor(() => stored().some((event) => event.event == 'click-item'), 'the click-item', 10000)
    await sleep(300)
    const suggestion = stored().find((event) => event.event == 'click-suggestion')!
    const click = stored().find((event) => event.event == 'click-item')!
    expect(firstRid).toMatch(/^a-/)
    expect(suggestion.properties).toEqual({ suggestion: 'linen shirt', rid: firstRid })
    expect(click.properties).toEqual({ item_id: secondAnswer.items[0].id, variant_item_id: secondAnswer.items[0].id, rid: secondAnswer.meta.rid })
    expect(seen.pageErrors).toEqual([])
  })

  it("a shelf tile (declarative attributes, no rid in the page code) carries its response's rid", async () => {
    const page = await context.newPage()
    const answer = page.waitForResponse((response) => response.url().includes('/viewed/viewed'))
    await page.goto(demo.url + '/product/1001')
    const { meta, items } = await (await answer).json()
    await page.click(`#also-viewed a[data-df-item-id="${items[0].id}"]`)
    await page.waitForURL(new RegExp('/product/' + items[0].id))
    await leave(page)
    await waitFor(() => stored().some((event) => event.event == 'click-item' && event.properties.item_id == items[0].id), 'the shelf click', 10000)
    const click = stored().find((event) => event.event == 'click-item' && event.properties.item_id == items[0].id)!
    expect(meta.rid).toMatch(/^r-/)
    expect(click.properties).toEqual({ item_id: items[0].id, variant_item_id: items[0].variants_ids[0], rid: meta.rid })
  })
})

describe('recommendation stores in Chromium', () => {
  it("product page: a store fills the bought-together shelf, shows its loading state, and a click on a tile carries that shelf's rid", async () => {
    const page = await context.newPage()
    const seen = watch(page)
    // The service's answer held back 800 ms, so the loading state can be seen.
    let release = () => {}
    const held = new Promise<void>((resolve) => (release = resolve))
    await page.route('**/v3/recommend/items/*/viewed/bought', async (route) => {
      await held
      await route.continue()
    })
    const answer = page.waitForResponse((response) => response.url().includes('/viewed/bought'))
    await page.goto(demo.url + '/product/1002')
    await page.waitForSelector('#also-bought[aria-busy=true]')
    expect(await page.textContent('#also-bought')).toContain('Loading recommendations…')
    await sleep(800)
    release()
    const { meta, items } = await (await answer).json()
    await page.waitForSelector('#also-bought[aria-busy=false] .tile')
    const state = await page.$$eval('#also-bought .tile', (tiles) => tiles.map((tile) => (tile as HTMLElement).dataset.dfItemId))
    expect(state).toEqual(items.map((item: { id: string }) => item.id))
    // The demo's bought-together answer starts with one product the viewed-together shelf shows
    // too; the second is on this shelf only.
    const item = items[1]
    await page.click(`#also-bought a[data-df-item-id="${item.id}"]`)
    await page.waitForURL(new RegExp('/product/' + item.id))
    await leave(page)
    await waitFor(() => stored().some((event) => event.event == 'click-item' && event.properties.item_id == item.id), 'the shelf click', 10000)
    const click = stored().find((event) => event.event == 'click-item' && event.properties.item_id == item.id)!
    expect(meta.rid).toMatch(/^r-/)
    expect(click.properties).toEqual({ item_id: item.id, variant_item_id: item.variants_ids[0], rid: meta.rid })
    expect(seen.pageErrors).toEqual([])
  })
})

describe('JSONP in Chromium', () => {
  it('GET with a callback reaches every family and fails cleanly on a missing key', async () => {
    const page = await context.newPage()
    await page.goto(demo.url + '/cart')
    const result = await page.evaluate(async () => {
      const { createClient } = (window as any).discoveryFeedbackClient
      const client = createClient({ key: 'demo-key', baseUrl: '', jsonp: true })
      const answers = await Promise.all([
        client.autocomplete({ q: 'boot' }),
        client.newest({ limit: 2 }),
        client.smartCollection('sale'),
        client.searchContent({ q: 'cap' })
      ])
      const keyless = await createClient({ key: '', baseUrl: '', jsonp: true })
        .newest()
        .catch((error: any) => ({ kind: error.kind, message: error.message }))
      return {
        rids: answers.map((answer: any) => answer.meta.rid[0]),
        items: answers[1].items.length,
        keyless,
        leftovers: Object.keys(window).filter((name) => name.startsWith('__discoveryFeedback'))
      }
    })
    expect(result).toEqual({
      rids: ['a', 'r', 'c', 's'],
      items: 2,
      keyless: { kind: 'api', message: 'discovery-feedback: /v3/recommend/items/newest: An API key must be provided.' },
      leftovers: []
    })
  })
})

describe('declarative tracking in Chromium', () => {
  it('data-df-* attributes and the purchase block produce the same events as manual calls', async () => {
    const [collector, pages] = await Promise.all([startCollector(), startPages()])
    const order = { order_id: 'o-9', currency: 'EUR', revenue: 20, line_items: [{ item_id: '5', variant_item_id: '51', unit_price: 20, quantity: 1 }] }
    // The add-on comes first and the page has no stub: it installs one, and its purchase waits
    // in the queue for the tracker, which is held back.
    pages.page(
      '/declarative',
      `<script async src="/discovery-feedback-declarative.min.js"></script>` +
        `<script async src="/discovery-feedback.min.js?delay=150" data-key="KEY" data-endpoint="${collector.url}" data-auto-view-page="false"></script>` +
        `<section data-df-rid="s-shelf"><a id="tile" data-df-item-id="5" data-df-variant-id="51" href="#"><b>Tile</b></a>` +
        `<div data-df-item-id="6" data-df-variant-id="61"><button id="add" data-df-add-to-cart>Add</button></div></section>` +
        `<script type="application/json" data-df-purchase>${JSON.stringify(order)}</script>`
    )
    const page = await context.newPage()
    await page.goto(pages.origin + '/declarative')
    await page.waitForFunction(() => (window as any).discoveryFeedback.tracker)
    await page.click('#tile b')
    await page.click('#add')
    await page.evaluate((order) => {
      const df = (window as any).discoveryFeedback
      df('purchase', order)
      df('click-item', { item_id: '5', variant_item_id: '51', rid: 's-shelf' })
      df('add-to-cart', { item_id: '6', variant_item_id: '61', quantity: 1, rid: 's-shelf' })
    }, order)
    await leave(page)
    await waitFor(() => collector.received().length >= 8, 'eight events', 10000)
    const events = collector.received().map((event) => [event.event, event.properties])
    expect(events).toHaveLength(8)
    // The same order tracked both ways has one event id, so a collector stores it once.
    expect(collector.events()).toHaveLength(7)
    const declarative = events.slice(0, 4)
    const manual = events.slice(4)
    expect(declarative).toEqual(manual)
    expect(declarative.map(([name]) => name)).toEqual(['purchase', 'click-item', 'click-item', 'add-to-cart'])
    await Promise.all([collector.close(), pages.close()])
  })
})
