// @vitest-environment node
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { describe, it, expect, beforeAll, afterAll, beforeEach, afterEach } from 'vitest'
import type { Envelope } from '../../src/index'
import { bfcacheBlockers, IMPORT_MAP, launch, leave, startServers, STUB, watch, whenQuiet, type Servers } from '../support/harness'
import { waitFor } from '../support/wait'

// Every test runs the built files in real Chromium, on a page server whose origin differs from
// the collector's, and proves delivery by what the collector received.

const VIEWPORT = { width: 913, height: 577 }

let browser: Browser
let servers: Servers
let context: BrowserContext

beforeAll(async () => {
  ;[browser, servers] = await Promise.all([launch(), startServers()])
})
afterAll(async () => {
  await browser?.close()
  await servers?.close()
})
beforeEach(async () => {
  servers.collector.clear()
  // A fresh profile per test: cookies and stored outboxes of one test must not reach the next.
  context = await browser.newContext({ viewport: VIEWPORT })
})
afterEach(async () => {
  await context.close()
})

const scriptTag = (attributes = '', src = '/discovery-feedback.min.js') =>
  `<script async src="${src}" data-key="KEY" data-endpoint="{{collector}}" ${attributes}></script>`

/** Events as a collector stores them: each event_id once. */
const delivered = () => servers.collector.events()
/** Every event as it came over the wire, resends included. */
const onTheWire = () => servers.collector.received()
const requestCount = () => servers.collector.requests.length

const open = async (path: string, options?: Parameters<Page['goto']>[1]) => {
  const page = await context.newPage()
  const seen = watch(page)
  await page.goto(servers.origin + path, options)
  return { page, seen }
}

/** Resolves once the script-tag tracker exists and the automatic view-page had its chance to run. */
const ready = (page: Page, global = 'discoveryFeedback.tracker') =>
  page
    .waitForFunction(global)
    // The automatic view waits one task (setTimeout 0) so the page may describe itself first; a
    // later timer fires after it, so what a test sees next includes its outcome.
    .then(() => page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 20))))

/** Leaves the page for real, then waits for `count` events and for the network to go quiet. */
const leaveAndCollect = async (page: Page, count: number, what: string) => {
  await leave(page)
  await waitFor(() => delivered().length >= count, what, 10000)
  await whenQuiet(requestCount)
  return delivered()
}

const byJson = (a: unknown, b: unknown) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1)

describe('script tag in Chromium', () => {
  it('replays the seven events queued before it loaded, each with its exact properties and a full envelope', async () => {
    const line = { item_id: 'sku-42', variant_item_id: 'sku-42-red', unit_price: 19.9, quantity: 2 }
    const other = { item_id: 'sku-9', variant_item_id: 'sku-9-m', unit_price: 0.5, quantity: 10 }
    const calls: [string, Record<string, unknown>][] = [
      ['click-suggestion', { rid: 'ac-1', suggestion: 'red shoes' }],
      ['click-item', { rid: 'search-1', item_id: 'sku-42', variant_item_id: 'sku-42-red' }],
      ['redirect', { rid: 'ac-2', suggestion: 'sale' }],
      [
        'purchase',
        {
          order_id: 'o-1',
          currency: 'EUR',
          revenue: 44.8,
          total_discount: 5,
          total_tax: 7.07,
          total_shipping: 4.5,
          affiliation: 'web shop',
          line_items: [line, other]
        }
      ],
      ['update-cart', { line_items: [line] }],
      ['add-to-cart', { item_id: 'sku-7', variant_item_id: 'sku-7-s', quantity: 3, rid: 'rec-1' }],
      ['view-page', { item_id: 'sku-42', variant_item_id: 'sku-42-red' }]
    ]
    const inline = calls.map(([event, properties]) => `discoveryFeedback(${JSON.stringify(event)}, ${JSON.stringify(properties)})`)
    servers.page(
      '/product/42',
      STUB +
        // Held back 150 ms by the server, so the calls below surely run before the script.
        scriptTag('', '/discovery-feedback.min.js?delay=150') +
        `<script>${inline.join('\n')}
         window.beforeLoad = { queued: discoveryFeedback.q.length, loaded: 'createTracker' in discoveryFeedback }</script>`
    )
    const started = Date.now()
    const { page, seen } = await open('/product/42?color=red')
    await ready(page)
    expect(await page.evaluate('beforeLoad')).toEqual({ queued: 7, loaded: false })
    const browserSide = await page.evaluate(() => ({ ua: navigator.userAgent, lang: [...navigator.languages] }))
    const events = await leaveAndCollect(page, 8, 'eight events')

    const url = servers.origin + '/product/42?color=red'
    const expected = [
      ...calls.map(([event, properties]) => (event == 'view-page' ? [event, { url, ref: '', ...VIEWPORT, ...properties }] : [event, properties])),
      // SPEC "Event kinds": add-to-cart comes with its click-item.
      ['click-item', { rid: 'rec-1', item_id: 'sku-7', variant_item_id: 'sku-7-s' }]
    ]
    expect(events.map((event) => [event.event, event.properties]).sort(byJson)).toEqual(expected.sort(byJson))
    // Nothing was sent twice, so a collector that does not deduplicate counts right too.
    expect(onTheWire()).toHaveLength(8)
    // The page described itself as a product page; the automatic view of the same URL was skipped.
    expect(events.filter((event) => event.event == 'view-page' && event.properties.url == url)).toHaveLength(1)

    for (const event of events) {
      expect(Object.keys(event).sort()).toEqual(['event', 'event_id', 'key', 'properties', 't_client', 'user'])
      expect(event.key).toBe('KEY')
      expect(typeof event.t_client).toBe('number')
      expect(event.t_client).toBeGreaterThanOrEqual(started)
      expect(event.t_client).toBeLessThanOrEqual(Date.now())
      expect(Object.keys(event.user).sort()).toEqual(['lang', 'sid', 'ua', 'uid'])
      expect(event.user.ua).toBe(browserSide.ua)
      expect(event.user.lang).toEqual(browserSide.lang)
      expect(event.user.uid.length).toBeGreaterThan(0)
      expect(event.user.uid.length).toBeLessThanOrEqual(32)
      expect(event.user.sid.length).toBeGreaterThan(0)
      expect(event.user.sid.length).toBeLessThanOrEqual(32)
      expect(typeof event.event_id).toBe('string')
    }
    expect(new Set(events.map((event) => event.event_id)).size).toBe(8)
    expect(new Set(events.map((event) => event.user.uid)).size).toBe(1)
    expect(new Set(events.map((event) => event.user.sid)).size).toBe(1)
    // text/plain is CORS-safelisted: the cross-origin collector never had to answer a preflight.
    expect(servers.preflights()).toEqual([])
    for (const post of servers.posts()) {
      expect(post.path).toBe('/v3/feedback')
      expect(post.contentType).toBe('text/plain;charset=UTF-8')
    }
    expect(seen.pageErrors).toEqual([])
    expect(seen.consoleErrors).toEqual([])
  })

  it('sends the automatic view-page of a plain page when the shopper leaves, ref empty for a direct visit', async () => {
    // A flush interval of a minute: whatever arrives was sent because the page went away.
    servers.page('/plain', STUB + scriptTag('data-flush-interval="60000"') + '<h1>Plain page</h1>')
    const { page, seen } = await open('/plain')
    await ready(page)
    expect(await page.evaluate(() => (window as any).discoveryFeedback.tracker.stats().queued)).toBe(1)
    expect(servers.posts()).toEqual([])
    const events = await leaveAndCollect(page, 1, 'the view-page')
    expect(events.map((event) => [event.event, event.properties])).toEqual([['view-page', { url: servers.origin + '/plain', ref: '', ...VIEWPORT }]])
    expect(onTheWire()).toHaveLength(1)
    expect(seen.pageErrors).toEqual([])
  })

  it('takes ref from document.referrer when the shopper came by a link', async () => {
    servers.page('/landing', '<a id="go" href="/plain">go</a>')
    servers.page('/plain', STUB + scriptTag() + '<h1>Plain page</h1>')
    const { page } = await open('/landing')
    await Promise.all([page.waitForURL('**/plain'), page.click('#go')])
    await ready(page)
    const referrer = await page.evaluate(() => document.referrer)
    expect(referrer).toBe(servers.origin + '/landing')
    const events = await leaveAndCollect(page, 1, 'the view-page')
    expect(events.map((event) => [event.event, event.properties])).toEqual([['view-page', { url: servers.origin + '/plain', ref: referrer, ...VIEWPORT }]])
  })

  it('ESM build in a SPA: one view-page per URL change, with the previous URL as ref', async () => {
    servers.page(
      '/app',
      IMPORT_MAP +
        `<script type="module">import { createTracker } from 'discovery-feedback'
         window.tracker = createTracker({ key: 'KEY', endpoint: '{{collector}}' })</script>`
    )
    const { page, seen } = await open('/app')
    await ready(page, 'window.tracker')
    // Each step resolves one task after the navigation it makes, when the tracker's own
    // deferred view (setTimeout 0, queued earlier) has run.
    const step = (code: string) =>
      page.evaluate(
        (code) =>
          new Promise((resolve) => {
            const done = () => setTimeout(resolve, 0)
            if (code == 'back') {
              addEventListener('popstate', done, { once: true })
              history.back()
            } else {
              new Function(code)()
              done()
            }
          }),
        code
      )
    await step("history.pushState({}, '', '/app/a')")
    await step("history.pushState({}, '', '/app/b')")
    await step('back')
    expect(await page.evaluate(() => location.pathname)).toBe('/app/a')
    await step("history.replaceState({ scrolled: 120 }, '', location.href)")
    await step("history.replaceState({}, '', '/app/c')")
    const events = await leaveAndCollect(page, 5, 'five view-pages')
    const o = servers.origin
    expect(events.map((event) => [event.event, event.properties.url, event.properties.ref])).toEqual([
      ['view-page', o + '/app', ''],
      ['view-page', o + '/app/a', o + '/app'],
      ['view-page', o + '/app/b', o + '/app/a'],
      ['view-page', o + '/app/a', o + '/app/b'],
      ['view-page', o + '/app/c', o + '/app/a']
    ])
    const urls = events.map((event) => event.properties.url)
    urls.slice(1).forEach((url, i) => expect(url).not.toBe(urls[i]))
    for (const event of events) expect(event.properties).toMatchObject(VIEWPORT)
    expect(seen.pageErrors).toEqual([])
  })

  it('sends no view-page for an in-page #anchor link, and one per route on a hash-routed site (data-hash-routing)', async () => {
    const links = '<a id="reviews" href="#reviews">Reviews</a><a id="cart" href="#/cart">Cart</a><a id="checkout" href="#/checkout">Checkout</a>'
    servers.page('/anchors', STUB + scriptTag() + links)
    servers.page('/hash-app', STUB + scriptTag('data-hash-routing="true"') + links)
    /** Clicks each link as a shopper would, then goes back once: fragment navigations all. */
    const browse = async (page: Page, ids: string[]) => {
      for (const id of ids) {
        await page.click('#' + id)
        await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 20)))
      }
      await page.evaluate(
        () =>
          new Promise((resolve) => {
            addEventListener('popstate', () => setTimeout(resolve, 20), { once: true })
            history.back()
          })
      )
    }
    const shop = await open('/anchors')
    await ready(shop.page)
    await browse(shop.page, ['reviews'])
    const o = servers.origin
    expect((await leaveAndCollect(shop.page, 1, 'the view-page')).map((event) => event.properties.url)).toEqual([o + '/anchors'])

    servers.collector.clear()
    const app = await open('/hash-app')
    await ready(app.page)
    await browse(app.page, ['cart', 'checkout'])
    const views = await leaveAndCollect(app.page, 4, 'four view-pages')
    expect(views.map((event) => [event.properties.url, event.properties.ref])).toEqual([
      [o + '/hash-app', ''],
      [o + '/hash-app#/cart', o + '/hash-app'],
      [o + '/hash-app#/checkout', o + '/hash-app#/cart'],
      [o + '/hash-app#/cart', o + '/hash-app#/checkout']
    ])
  })

  it('delivers a 400-event burst made just before leaving, each event once, every body under 64 KiB', async () => {
    servers.page('/burst', STUB + scriptTag())
    const { page } = await open('/burst')
    await ready(page)
    await page.evaluate(() => {
      for (let i = 0; i < 400; i++) (window as any).discoveryFeedback('click-item', { rid: 'burst', item_id: 'item-' + i, variant_item_id: 'v-' + i })
    })
    // No wait: the shopper leaves the moment the burst is tracked.
    await leaveAndCollect(page, 401, '400 click-items and the view-page')
    const clicks = onTheWire().filter((event) => event.event == 'click-item')
    expect(clicks).toHaveLength(400)
    expect(new Set(clicks.map((event) => event.event_id)).size).toBe(400)
    expect(clicks.map((event) => event.properties.item_id).sort()).toEqual(Array.from({ length: 400 }, (_, i) => 'item-' + i).sort())
    const posts = servers.posts()
    expect(posts.length).toBeGreaterThan(1)
    for (const post of posts) expect(post.bytes).toBeLessThan(65536)
  })

  it('never raises a page error on bad calls, names event and field in the console, and keeps working', async () => {
    servers.page(
      '/bad',
      STUB +
        // Bad calls in the pre-load queue too: replay must go on past them.
        `<script>discoveryFeedback('add-to-cart', { item_id: 'a', variant_item_id: 'a', quantity: 0, rid: 'r' })
         discoveryFeedback('click-item', { item_id: 'queued', variant_item_id: 'queued-1' })</script>` +
        scriptTag('data-auto-view-page="false"')
    )
    const { page, seen } = await open('/bad')
    await ready(page)
    await page.evaluate(() => {
      const df = (window as any).discoveryFeedback
      df('nope', {})
      df('purchase', null)
      df('click-item', { item_id: 5 })
      df('update-cart', { line_items: [{ item_id: '1', variant_item_id: '1', unit_price: 'free', quantity: 1 }] })
      df('view-page', 'home')
      df()
      df.tracker.purchase(undefined)
      df.tracker.clickSuggestion({ rid: 'r' })
      df.tracker.track(Symbol('x'), 1)
      df.tracker.identify({ uid: 'x'.repeat(33) })
      df('init', { key: 'OTHER', endpoint: '/elsewhere' })
      df('click-item', { item_id: 'ok', variant_item_id: 'ok-1' })
      df('flush')
    })
    const events = await leaveAndCollect(page, 2, 'the two valid clicks')
    expect(events.map((event) => [event.event, event.properties])).toEqual([
      ['click-item', { item_id: 'queued', variant_item_id: 'queued-1' }],
      ['click-item', { item_id: 'ok', variant_item_id: 'ok-1' }]
    ])
    expect(seen.pageErrors).toEqual([])
    const named = (...words: string[]) => expect.stringMatching(new RegExp(words.map((word) => '(?=.*' + word.replace(/[[\]]/g, '\\$&') + ')').join('')))
    for (const expected of [
      named('add-to-cart', 'quantity', 'positive integer'),
      named('nope', 'event must be one of'),
      named('purchase', 'properties', 'must be an object'),
      named('click-item', 'item_id', 'non-empty string', '5'),
      named('update-cart', 'line_items[0].unit_price', 'finite number'),
      named('view-page', 'properties', 'must be an object'),
      named('purchase', 'properties', 'undefined'),
      named('click-suggestion', 'suggestion', 'is required'),
      named('user.uid', '32 characters'),
      named('init', 'a tracker already exists')
    ]) {
      expect(seen.consoleErrors).toContainEqual(expected)
    }
    // No message leaks the shopper's data, only types (SPEC: values shown by type, numbers as they are).
    expect(seen.consoleErrors.join('\n')).not.toContain('home')
    expect(seen.consoleErrors.join('\n')).not.toContain('free')
  })

  it('installs over a clashing global without throwing', async () => {
    servers.page('/clash', '<script>window.discoveryFeedback = 42</script>' + scriptTag())
    const { page, seen } = await open('/clash')
    await ready(page)
    expect(await page.evaluate(() => typeof (window as any).discoveryFeedback)).toBe('function')
    await page.evaluate(() => (window as any).discoveryFeedback('redirect', { rid: 'ac-1', suggestion: 'sale' }))
    const events = await leaveAndCollect(page, 2, 'the view-page and the redirect')
    expect(events.map((event) => event.event)).toEqual(['view-page', 'redirect'])
    expect(seen.pageErrors).toEqual([])
  })

  it('a second copy of the script keeps the first tracker and does not double events', async () => {
    servers.page('/twice', STUB + scriptTag() + '<script>discoveryFeedback("click-item", { item_id: "1", variant_item_id: "1" })</script>')
    const { page, seen } = await open('/twice')
    await ready(page)
    await page.evaluate(() => ((window as any).first = [(window as any).discoveryFeedback, (window as any).discoveryFeedback.tracker]))
    // The second copy, as a tag manager would add it, with a key of its own that must not win.
    await page.evaluate(
      (endpoint) =>
        new Promise((resolve, reject) => {
          const script = document.createElement('script')
          script.src = '/discovery-feedback.min.js'
          script.dataset.key = 'SECOND'
          script.dataset.endpoint = endpoint
          script.onload = resolve
          script.onerror = reject
          document.head.append(script)
        }),
      servers.collector.url
    )
    await ready(page)
    expect(
      await page.evaluate(() => {
        const [command, tracker] = (window as any).first
        return command == (window as any).discoveryFeedback && tracker == command.tracker
      })
    ).toBe(true)
    await page.evaluate(() => (window as any).discoveryFeedback('redirect', { rid: 'ac-1', suggestion: 'sale' }))
    const events = await leaveAndCollect(page, 3, 'three events')
    expect(onTheWire().map((event) => [event.event, event.key])).toEqual([
      ['click-item', 'KEY'],
      ['view-page', 'KEY'],
      ['redirect', 'KEY']
    ])
    expect(events).toHaveLength(3)
    expect(seen.pageErrors).toEqual([])
  })

  it('sends a new view-page when the page comes back from the back/forward cache', async () => {
    await context.addInitScript(() => {
      ;(window as any).pageshows = []
      addEventListener('pageshow', (event) => (window as any).pageshows.push(event.persisted))
    })
    servers.page('/a', STUB + scriptTag() + '<h1>A</h1>')
    servers.page('/b', '<h1>B</h1>')
    const { page, seen } = await open('/a')
    await ready(page)
    const blockers = await bfcacheBlockers(page)
    await page.goto(servers.origin + '/b')
    await waitFor(() => delivered().length == 1, 'the first view-page, sent on leaving A', 10000)
    const first = delivered()[0]
    // A restored page fires no load event: wait for the commit only.
    await page.goBack({ waitUntil: 'commit' })
    const restored = await page
      .waitForFunction(() => (window as any).pageshows.includes(true), undefined, { timeout: 5000 })
      .then(
        () => true,
        () => false
      )
    expect(restored, 'A was not restored from the back/forward cache: ' + blockers.join(', ')).toBe(true)
    expect(blockers).toEqual([])
    const events = await leaveAndCollect(page, 2, 'the view-page of the restored page')
    expect(events.map((event) => [event.event, event.properties.url])).toEqual([
      ['view-page', servers.origin + '/a'],
      ['view-page', servers.origin + '/a']
    ])
    const again = events[1] as Envelope<'view-page'>
    expect(again.event_id).not.toBe(first.event_id)
    expect(again.t_client).toBeGreaterThan(first.t_client)
    // The same shopper and session: to them it was one visit, not a reload.
    expect(again.user).toEqual(first.user)
    expect(seen.pageErrors).toEqual([])
  })
})
