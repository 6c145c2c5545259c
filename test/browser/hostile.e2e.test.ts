// @vitest-environment node
import type { Browser, BrowserContext } from 'playwright-core'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { validate } from '../../src/shared/rules'
import type { Envelope } from '../../src/index'
import { launch, leave, startServers, STUB, watch, whenQuiet, type Servers } from '../support/harness'
import { waitFor } from '../support/wait'

// Real shop pages: the built script tag on pages that change built-ins the way old shop
// scripts do, in a sandboxed frame, next to a clashing element, and under an API fuzz.

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
  context = await browser.newContext()
})
afterEach(async () => {
  await context.close()
})

const scriptTag = (attributes = 'data-key="KEY" data-endpoint="{{collector}}"', src = '/discovery-feedback.min.js') =>
  `<script async src="${src}" ${attributes}></script>`

const open = async (path: string) => {
  const page = await context.newPage()
  const seen = watch(page)
  await page.goto(servers.origin + path)
  return { page, seen }
}

/** SPEC's envelope, checked as the reference collector checks it. */
const expectSpecShape = (event: Envelope) => {
  expect(() => validate(event.event, event.properties)).not.toThrow()
  expect(event.user.uid).toMatch(/^[\w-]{1,32}$/)
  expect(event.user.sid).toMatch(/^[\w-]{1,32}$/)
  expect(Array.isArray(event.user.lang) && event.user.lang.every((code) => typeof code == 'string')).toBe(true)
}

const order = {
  order_id: 'o-1',
  currency: 'EUR',
  revenue: 24.9,
  line_items: [
    { item_id: '42', variant_item_id: '421', unit_price: 9.95, quantity: 2 },
    { item_id: '7', variant_item_id: '71', unit_price: 5, quantity: 1 }
  ]
}

// What Prototype.js 1.6 and similar page scripts do to the built-ins, and wrappers that
// monitoring and consent scripts put around fetch, JSON and history.
const PROTOTYPE_JS = `<script>
Object.prototype.polluted = 'yes'
Array.prototype.toJSON = function () { var parts = []; for (var i = 0; i < this.length; i++) parts.push(JSON.stringify(this[i])); return '[' + parts.join(', ') + ']' }
String.prototype.toJSON = function () { return '"' + this + '"' }
Array.prototype.each = function (iterator) { for (var i = 0; i < this.length; i++) iterator(this[i], i) }
Array.prototype.reduce = function () { return this.length > 1 ? this : this[0] }
Array.from = function (iterable) { var result = []; if (iterable) for (var i = 0; i < (iterable.length || 0); i++) result.push(iterable[i]); return result }
window.fetch = (function (original) { return function (url, init) { return original.call(window, url, init) } })(window.fetch)
JSON.stringify = (function (original) { return function (value, replacer, space) { return original.call(JSON, value, replacer, space) } })(JSON.stringify)
history.pushState = (function (original) { return function () { return original.apply(history, arguments) } })(history.pushState)
</script>`

describe('hostile pages in Chromium', () => {
  it("sends SPEC's shapes from a page running Prototype.js-style built-ins and wrapped fetch, JSON and history", async () => {
    servers.page(
      '/magento',
      PROTOTYPE_JS +
        STUB +
        scriptTag() +
        `<script>
          discoveryFeedback('user', { email: 'shopper@example.com' })
          discoveryFeedback('purchase', ${JSON.stringify(order)})
          discoveryFeedback('update-cart', { line_items: ${JSON.stringify(order.line_items)} })
          discoveryFeedback('click-item', { rid: 's-1', item_id: '42', variant_item_id: '421' })
        </script>`
    )
    const { page, seen } = await open('/magento')
    await page.waitForFunction('discoveryFeedback.tracker')
    await page.evaluate(() => history.pushState(null, '', '/magento/next'))
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 50)))
    const stats = await page.evaluate(() => (window as any).discoveryFeedback.tracker.stats())
    await leave(page)
    await waitFor(() => servers.collector.events().length >= 5, 'five events', 10000)
    await whenQuiet(() => servers.collector.requests.length)

    const events = servers.collector.events()
    expect(events.map((event) => event.event).sort()).toEqual(['click-item', 'purchase', 'update-cart', 'view-page', 'view-page'])
    events.forEach(expectSpecShape)
    expect(events.find((event) => event.event == 'purchase')!.properties).toEqual(order)
    expect(events.find((event) => event.event == 'purchase')!.user.email).toBe('shopper@example.com')
    expect(events.some((event) => 'polluted' in Object(event.properties) && Object.keys(event.properties).includes('polluted'))).toBe(false)
    expect(stats.dropped.invalid).toBe(0)
    expect(seen.pageErrors).toEqual([])
    expect(seen.consoleErrors).toEqual([])
  })

  it('keeps uid and sid for the page inside a frame sandboxed without allow-same-origin, where cookies and storage throw', async () => {
    servers.page(
      '/shop',
      `<script>addEventListener('message', (event) => (window.cookieAccess = event.data))</script><iframe sandbox="allow-scripts" src="/widget"></iframe>`
    )
    servers.page(
      '/widget',
      STUB +
        scriptTag('data-key="KEY" data-endpoint="{{collector}}" data-auto-view-page="false"') +
        `<script>
          try { document.cookie; window.parent.postMessage('cookie readable', '*') } catch (error) { window.parent.postMessage(error.name, '*') }
          discoveryFeedback('click-item', { item_id: '1', variant_item_id: '11' })
          setTimeout(() => discoveryFeedback('click-item', { item_id: '2', variant_item_id: '21' }), 1200)
          setTimeout(() => discoveryFeedback('flush'), 1300)
        </script>`
    )
    const { page, seen } = await open('/shop')
    // The frame's origin is opaque: reading document.cookie throws, as on the shop's widget.
    await page.waitForFunction('window.cookieAccess')
    expect(await page.evaluate('cookieAccess')).toBe('SecurityError')
    await waitFor(() => servers.collector.events().length >= 2, 'both clicks', 10000)
    const [first, second] = servers.collector.events()
    expect([first.properties.item_id, second.properties.item_id]).toEqual(['1', '2'])
    expect(first.user.uid).toMatch(/^[\w-]{21}$/)
    expect(second.user).toMatchObject({ uid: first.user.uid, sid: first.user.sid })
    expect(seen.pageErrors).toEqual([])
  })

  it('works with the README stub on a page that has an element with id="discoveryFeedback"', async () => {
    servers.page(
      '/named',
      '<div id="discoveryFeedback">Our feedback form</div>' +
        STUB +
        `<script>discoveryFeedback('click-item', { item_id: '9', variant_item_id: '91' })</script>` +
        scriptTag('data-key="KEY" data-endpoint="{{collector}}" data-auto-view-page="false"', '/discovery-feedback.min.js?delay=150')
    )
    const { page, seen } = await open('/named')
    await page.waitForFunction('discoveryFeedback.tracker')
    await page.evaluate(() => (window as any).discoveryFeedback('click-item', { item_id: '10', variant_item_id: '101' }))
    await leave(page)
    await waitFor(() => servers.collector.events().length >= 2, 'both clicks', 10000)
    expect(servers.collector.events().map((event) => event.properties.item_id)).toEqual(['9', '10'])
    expect(seen.pageErrors).toEqual([])
  })
})

describe('API fuzz in Chromium', () => {
  it('lets no exception of 5,000 hostile calls reach the page, and delivers every valid event exactly once', async () => {
    servers.page(
      '/fuzz',
      STUB +
        `<script>
          window.faults = []
          discoveryFeedback('init', { key: 'KEY', endpoint: '{{collector}}', maxBatchEvents: 50, onError: (error) => faults.push(typeof error.message) })
        </script>` +
        scriptTag('')
    )
    const { page, seen } = await open('/fuzz')
    await page.waitForFunction('discoveryFeedback.tracker')
    await page.addScriptTag({ type: 'module', content: "import { fuzz } from '/fuzz.mjs'; window.fuzz = fuzz" })
    await page.waitForFunction('window.fuzz')
    const result = await page.evaluate(() => {
      const global = window as any
      // Quiet console: thousands of reported faults would only slow the run down.
      console.error = console.log = () => {}
      return global.fuzz({ tracker: global.discoveryFeedback.tracker, command: global.discoveryFeedback, seed: 11, count: 5000 })
    })
    const faults: string[] = await page.evaluate('faults')
    expect(result.threw).toBe(0)
    expect(faults.length).toBeGreaterThan(1000)
    expect(faults.every((type) => type == 'string')).toBe(true)
    const validIds = new Set<string>(result.valid)
    const received = () => servers.collector.received().filter((event: Envelope) => validIds.has(String(event.properties.item_id)))
    await waitFor(() => received().length >= validIds.size, validIds.size + ' valid clicks', 20000)
    await leave(page)
    await whenQuiet(() => servers.collector.requests.length, 500)
    expect(
      received()
        .map((event) => event.properties.item_id)
        .sort()
    ).toEqual([...validIds].sort())
    expect(seen.pageErrors).toEqual([])
  })
})
