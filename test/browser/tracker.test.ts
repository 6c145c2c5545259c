// @vitest-environment node
import type { Browser, BrowserContext } from 'playwright-core'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { IMPORT_MAP, launch, leave, startCollector, startPages, STUB, sleep, waitFor, watch } from './harness'

let browser: Browser
let context: BrowserContext
let collector: Awaited<ReturnType<typeof startCollector>>
let pages: Awaited<ReturnType<typeof startPages>>

const scriptTag = (attributes = '') =>
  `<script async src="/discovery-feedback.min.js" data-key="KEY" data-endpoint="${collector.url}" ${attributes}></script>`

beforeAll(async () => {
  ;[browser, collector, pages] = await Promise.all([launch(), startCollector(), startPages()])
})
afterAll(async () => {
  await browser?.close()
  await Promise.all([collector?.close(), pages?.close()])
})
beforeEach(async () => {
  collector.clear()
  context = await browser.newContext({ viewport: { width: 1024, height: 700 } })
})
afterEach(async () => {
  await context.close()
})

const line = { item_id: '42', variant_item_id: '421', unit_price: 19.9, quantity: 2 }
const CALLS: [string, Record<string, unknown>][] = [
  ['click-suggestion', { rid: 'a-1', suggestion: 'red shoes' }],
  ['click-item', { rid: 's-1', item_id: '42', variant_item_id: '421' }],
  ['redirect', { rid: 'a-2', suggestion: 'sale' }],
  ['purchase', { order_id: 'o-1', currency: 'EUR', revenue: 44.3, total_tax: 7.07, total_shipping: 4.5, line_items: [line] }],
  ['update-cart', { line_items: [line] }],
  ['add-to-cart', { item_id: '7', variant_item_id: '71', quantity: 1, rid: 'r-1' }],
  ['view-page', { item_id: '42', variant_item_id: '421' }]
]

describe('script tag in Chromium', () => {
  it('replays calls made before it loaded and delivers all seven events with the exact envelope', async () => {
    const calls = CALLS.map(([event, properties]) => `discoveryFeedback(${JSON.stringify(event)}, ${JSON.stringify(properties)})`)
    pages.page('/seven', STUB + `<script>${calls.join('\n')}</script>` + scriptTag())
    const page = await context.newPage()
    const seen = watch(page)
    await page.goto(pages.origin + '/seven')
    await page.waitForFunction(() => (window as any).discoveryFeedback.tracker)
    await leave(page)
    await waitFor(() => collector.events().length >= 8, 'eight events').catch((error) => {
      console.log(JSON.stringify(collector.events().map((e) => e.event)), seen)
      throw error
    })
    await sleep(300) // nothing else may follow
    const events = collector.events()
    expect(events.map((event) => event.event)).toEqual([
      'click-suggestion',
      'click-item',
      'redirect',
      'purchase',
      'update-cart',
      'click-item', // SPEC: add-to-cart comes with its click-item
      'add-to-cart',
      'view-page'
    ])
    const given = Object.fromEntries(CALLS)
    for (const event of events.filter((event) => !['view-page', 'click-item'].includes(event.event))) {
      expect(event.properties).toEqual(given[event.event])
    }
    expect(events[1].properties).toEqual(given['click-item'])
    expect(events[5].properties).toEqual({ rid: 'r-1', item_id: '7', variant_item_id: '71' })
    // The page described itself as a product page; the automatic view-page did not double it.
    expect(events[7].properties).toEqual({ url: pages.origin + '/seven', ref: '', width: 1024, height: 700, item_id: '42', variant_item_id: '421' })
    const uids = new Set(events.map((event) => event.user.uid))
    const sids = new Set(events.map((event) => event.user.sid))
    expect(uids.size).toBe(1)
    expect(sids.size).toBe(1)
    for (const event of events) {
      expect(Object.keys(event).sort()).toEqual(['event', 'event_id', 'key', 'properties', 't_client', 'user'])
      expect(event.key).toBe('KEY')
      expect(event.t_client).toBeGreaterThan(Date.now() - 60000)
      expect(event.user.uid.length).toBeLessThanOrEqual(32)
      expect(event.user.sid.length).toBeLessThanOrEqual(32)
      expect(event.user.ua).toContain('Chrome')
      expect(event.user.lang!.length).toBeGreaterThan(0)
    }
    expect(new Set(events.map((event) => event.event_id)).size).toBe(8)
    // A safelisted content type: the cross-origin collector never saw a preflight.
    expect(collector.requests.filter((request) => request.method == 'OPTIONS')).toEqual([])
    expect(collector.requests.every((request) => request.contentType == 'text/plain;charset=UTF-8')).toBe(true)
    expect(seen.pageErrors).toEqual([])
  })

  it('sends the automatic view-page of a plain page when the shopper leaves', async () => {
    pages.page('/plain', STUB + scriptTag() + '<h1>Plain page</h1>')
    const page = await context.newPage()
    await page.goto(pages.origin + '/plain')
    await page.waitForFunction(() => (window as any).discoveryFeedback.tracker)
    await sleep(100)
    await leave(page)
    await waitFor(() => collector.events().length == 1, 'the view-page')
    await sleep(300)
    expect(collector.events().map((event) => [event.event, event.properties])).toEqual([
      ['view-page', { url: pages.origin + '/plain', ref: '', width: 1024, height: 700 }]
    ])
    const cookies = await context.cookies(pages.origin)
    expect(cookies.map((cookie) => [cookie.name, cookie.sameSite, cookie.path]).sort()).toEqual([
      ['df_sid', 'Lax', '/'],
      ['df_uid', 'Lax', '/']
    ])
    expect(cookies.find((cookie) => cookie.name == 'df_uid')!.value).toBe(collector.events()[0].user.uid)
  })

  it('sends a view-page per SPA navigation with the previous URL as ref', async () => {
    pages.page(
      '/spa',
      IMPORT_MAP +
        `<script type="module">import { createTracker } from 'discovery-feedback'
         window.tracker = createTracker({ key: 'KEY', endpoint: ${JSON.stringify(collector.url)} })</script>`
    )
    const page = await context.newPage()
    await page.goto(pages.origin + '/spa?from=ad', { referer: 'https://search.example/' })
    await page.waitForFunction(() => (window as any).tracker)
    const step = async (script: string) => {
      await page.evaluate(script)
      await sleep(50)
    }
    await step("history.pushState(null, '', '/spa/a')")
    await step("history.pushState(null, '', '/spa/b')")
    await step('history.back()')
    await step("history.replaceState({ scrolled: true }, '', location.href)")
    await step("history.replaceState(null, '', '/spa/c')")
    await step("history.pushState(null, '', '/spa/c')")
    await leave(page)
    await waitFor(() => collector.events().length >= 5, 'five view-pages')
    await sleep(300)
    const o = pages.origin
    expect(collector.events().map((event) => [event.event, event.properties.url, event.properties.ref])).toEqual([
      ['view-page', o + '/spa?from=ad', 'https://search.example/'],
      ['view-page', o + '/spa/a', o + '/spa?from=ad'],
      ['view-page', o + '/spa/b', o + '/spa/a'],
      ['view-page', o + '/spa/a', o + '/spa/b'],
      ['view-page', o + '/spa/c', o + '/spa/a']
    ])
  })

  it('delivers a 400-event burst made just before leaving, every body under 64 KiB', async () => {
    pages.page('/burst', STUB + scriptTag('data-auto-view-page="false"'))
    const page = await context.newPage()
    await page.goto(pages.origin + '/burst')
    await page.waitForFunction(() => (window as any).discoveryFeedback.tracker)
    await page.evaluate(() => {
      for (let i = 0; i < 400; i++) (window as any).discoveryFeedback('click-item', { rid: 's-burst', item_id: 'item-' + i, variant_item_id: 'v-' + i })
    })
    await leave(page)
    await waitFor(() => collector.events().length >= 400, '400 events')
    await sleep(300)
    const ids = collector.events().map((event) => event.properties.item_id)
    expect(ids).toHaveLength(400)
    expect(new Set(ids).size).toBe(400)
    const posts = collector.requests.filter((request) => request.method == 'POST')
    expect(posts.length).toBeGreaterThan(1)
    for (const post of posts) expect(post.bytes).toBeLessThan(65536)
  })

  it('never raises a page error for bad calls, names event and field, and keeps working', async () => {
    pages.page('/bad', STUB + scriptTag('data-auto-view-page="false"'))
    const page = await context.newPage()
    const seen = watch(page)
    await page.goto(pages.origin + '/bad')
    await page.waitForFunction(() => (window as any).discoveryFeedback.tracker)
    await page.evaluate(() => {
      const df = (window as any).discoveryFeedback
      df('nope', {})
      df('purchase', null)
      df('click-item', { item_id: 5 })
      df()
      df.tracker.purchase(undefined)
      df.tracker.updateCart({ line_items: [{ item_id: '1' }] })
      df.tracker.track(Symbol('x'), 1)
      df('click-item', { item_id: 'ok', variant_item_id: 'ok-1' })
      df('flush')
    })
    await waitFor(() => collector.events().length == 1, 'the valid click')
    expect(collector.events()[0].properties).toEqual({ item_id: 'ok', variant_item_id: 'ok-1' })
    expect(seen.pageErrors).toEqual([])
    expect(seen.consoleErrors).toEqual(
      expect.arrayContaining([
        expect.stringContaining('nope: event must be one of'),
        'discovery-feedback: purchase: properties must be an object, got object',
        'discovery-feedback: click-item: item_id must be a non-empty string, got 5',
        'discovery-feedback: update-cart: line_items[0].variant_item_id is required'
      ])
    )
  })

  it('installs over a clashing global, and a second copy of the script does not double events', async () => {
    pages.page('/twice', '<script>window.discoveryFeedback = 42</script>' + scriptTag('data-auto-view-page="false"'))
    const page = await context.newPage()
    const seen = watch(page)
    await page.goto(pages.origin + '/twice')
    await page.waitForFunction(() => typeof (window as any).discoveryFeedback == 'function')
    await page.addScriptTag({ url: '/discovery-feedback.min.js' })
    await page.evaluate(() => (window as any).discoveryFeedback('redirect', { rid: 'a-1', suggestion: 'x' }))
    await leave(page)
    await waitFor(() => collector.events().length >= 1, 'the redirect')
    await sleep(300)
    expect(collector.events().map((event) => event.event)).toEqual(['redirect'])
    expect(seen.pageErrors).toEqual([])
  })

  it('sends a new view-page when the page comes back from the back/forward cache', async () => {
    pages.page('/a', STUB + scriptTag() + '<a href="/b">b</a>')
    pages.page('/b', '<h1>b</h1>')
    const page = await context.newPage()
    await page.goto(pages.origin + '/a')
    await page.waitForFunction(() => (window as any).discoveryFeedback.tracker)
    await page.evaluate(() => addEventListener('pageshow', (event) => ((window as any).restored = event.persisted)))
    await sleep(100)
    await page.goto(pages.origin + '/b')
    await waitFor(() => collector.events().length == 1, 'the first view-page')
    await page.goBack({ waitUntil: 'commit' }) // a restored page fires no load event
    await page.waitForFunction(() => (window as any).restored !== undefined)
    expect(await page.evaluate(() => (window as any).restored)).toBe(true)
    await page.evaluate(() => (window as any).discoveryFeedback('click-item', { item_id: '1', variant_item_id: '1' }))
    await leave(page)
    await waitFor(() => collector.events().length >= 3, 'the restored view-page and the click')
    const events = collector.events()
    expect(events.map((event) => [event.event, event.properties.url])).toEqual([
      ['view-page', pages.origin + '/a'],
      ['view-page', pages.origin + '/a'],
      ['click-item', undefined]
    ])
  })
})
