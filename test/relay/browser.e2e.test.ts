// @vitest-environment node
import { readFileSync } from 'node:fs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createRelay, toNodeHandler, type Relay, type RelayOptions } from '../../src/relay'
import { launch, leave, STUB, watch, whenQuiet } from '../support/harness'
import { sleep, waitFor } from '../support/wait'
import { recordingSink, serve } from './support'

// The script tag on a shop whose data-endpoint is the relay on the shop's own origin
// (`/df/events`), served by the same Node server as the pages, in real Chromium. Every
// scenario ends by counting the sink's entries per event id: each exactly once.

let browser: Browser
let context: BrowserContext
let site: Awaited<ReturnType<typeof serve>>
let relay: Relay
let recorded: ReturnType<typeof recordingSink>
// 'up': the relay answers; 'drop': the connection is cut before any answer; 'lose': the relay
// stores the batch, then the connection is cut before its answer goes out.
let mode: 'up' | 'drop' | 'lose' = 'up'
let posts = 0
// The Cookie header of each POST to the relay.
const cookieHeaders: (string | undefined)[] = []
// Events the relay's store recognised as stored before (a resend), over every batch.
let duplicates = 0

const SCRIPT = readFileSync(new URL('../../dist/discovery-feedback.min.js', import.meta.url))
const pages = new Map<string, string>()

const handler = toNodeHandler({ fetch: (request, info) => relay.fetch(request, info) })

const shop = (attributes = '') =>
  STUB +
  `<script async src="/discovery-feedback.min.js" data-key="KEY" data-endpoint="/df/events" ${attributes}></script>` +
  `<script>window.clicks = (prefix, count) => { for (let i = 0; i < count; i++) discoveryFeedback('click-item', { item_id: prefix + '-' + i, variant_item_id: 'v' }) }</script>`

const startRelay = (options: Partial<RelayOptions> = {}) => {
  recorded = recordingSink()
  duplicates = 0
  relay = createRelay({ keys: ['KEY'], sink: recorded.sink, onBatch: (report) => (duplicates += report.duplicates.length), bots: 'keep', ...options })
}

beforeAll(async () => {
  site = await serve((request: IncomingMessage, response: ServerResponse) => {
    const path = new URL(request.url!, 'http://x').pathname
    if (path == '/df/events') {
      if (request.method == 'POST') {
        posts++
        cookieHeaders.push(request.headers.cookie)
      }
      if (mode == 'drop') return request.socket.destroy()
      if (mode == 'lose' && request.method == 'POST') {
        const cut = () => request.socket.destroy()
        return handler(request, { headersSent: false, writableEnded: false, writeHead: () => {}, write: () => {}, end: cut, destroy: cut })
      }
      return handler(request, response)
    }
    if (path == '/discovery-feedback.min.js') return response.writeHead(200, { 'content-type': 'text/javascript' }).end(SCRIPT)
    if (path == '/favicon.ico') return response.writeHead(204).end()
    const html = pages.get(path)
    if (html) return response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><meta charset="utf-8">' + html)
    response.writeHead(404).end()
  })
  browser = await launch()
  pages.set('/shop', shop())
  pages.set('/product', shop())
  pages.set('/quiet', shop('data-auto-view-page="false"'))
})
afterAll(async () => {
  await browser?.close()
  await site?.close()
})
beforeEach(async () => {
  mode = 'up'
  posts = 0
  startRelay()
  context = await browser.newContext()
})
afterEach(async () => {
  await context.close()
})

// The shop on http://localhost:PORT: a host name, as a shop has, for the cookie's sake.
const url = (path: string) => site.origin.replace('127.0.0.1', 'localhost') + path

const open = async (path: string, into: BrowserContext = context) => {
  const page = await into.newPage()
  await page.goto(url(path))
  await page.waitForFunction(() => (window as any).discoveryFeedback.tracker)
  return page
}
const clicks = (page: Page, prefix: string, count: number) => page.evaluate(([p, n]) => (window as any).clicks(p, n), [prefix, count] as const)
const flush = (page: Page) => page.evaluate(() => (window as any).discoveryFeedback('flush'))
const ids = (prefix: string, count: number) => Array.from({ length: count }, (_, index) => prefix + '-' + index)

/** The click-items in the sink, by item_id, sorted. */
const clicked = () =>
  recorded
    .events()
    .filter((event) => event.event == 'click-item')
    .map((event) => String((event.properties as { item_id: string }).item_id))
    .sort()

/** Waits until the sink holds `count` events and nothing more arrives, then checks each event id reached it once. */
async function expectOnce(count: number, timeout = 15000) {
  await waitFor(() => recorded.events().length >= count, count + ' events in the sink', timeout).catch(() => {})
  await whenQuiet(() => recorded.events().length + posts, 500, timeout)
  const counts = recorded.counts()
  expect([...counts.values()].filter((times) => times != 1)).toEqual([])
  expect(recorded.events()).toHaveLength(count)
  expect(counts.size).toBe(count)
}

const ORDER = {
  order_id: 'o-1',
  currency: 'EUR',
  revenue: 44.8,
  line_items: [{ item_id: 'sku-42', variant_item_id: 'sku-42-red', unit_price: 19.9, quantity: 2 }]
}

describe('the script tag through a same-origin relay', () => {
  it('a walk (view-page, clicks, add-to-cart, a purchase, another page, leaving) ends with every event in the sink once', async () => {
    const page = await open('/shop')
    const seen = watch(page)
    await clicks(page, 'walk', 3)
    await page.evaluate((order) => {
      const df = (window as any).discoveryFeedback
      df('add-to-cart', { item_id: 'sku-42', variant_item_id: 'sku-42-red', quantity: 2, rid: 'rec-1' })
      df('purchase', order)
    }, ORDER)
    await page.goto(url('/product'))
    await page.waitForFunction(() => (window as any).discoveryFeedback.tracker)
    await clicks(page, 'after', 2)
    const ua = await page.evaluate(() => navigator.userAgent)
    await leave(page)
    // An add-to-cart with a rid is also a click-item (the tracker sends both): ten events.
    await expectOnce(10)
    const events = recorded.events()
    expect(events.map((event) => event.event).sort()).toEqual([
      'add-to-cart',
      'click-item',
      'click-item',
      'click-item',
      'click-item',
      'click-item',
      'click-item',
      'purchase',
      'view-page',
      'view-page'
    ])
    expect(clicked()).toEqual([...ids('walk', 3), ...ids('after', 2), 'sku-42'].sort())
    expect(events.find((event) => event.event == 'purchase')!.properties).toEqual(ORDER)
    // Filled by the relay from the request: the page has no way to know its own address.
    expect(new Set(events.map((event) => event.user.ip))).toEqual(new Set(['127.0.0.1']))
    expect(new Set(events.map((event) => event.user.ua))).toEqual(new Set([ua]))
    expect(new Set(events.map((event) => event.user.uid)).size).toBe(1)
    for (const event of events) expect(Math.abs(event.t_corrected - event.received_at)).toBeLessThan(60000)
    expect(seen.pageErrors).toEqual([])
  })

  it('the sink down (503 with Retry-After) for 4 s, then up: every event once', async () => {
    recorded.failWith(() => new Error('the service is down'))
    const page = await open('/quiet')
    await clicks(page, 'down', 30)
    await flush(page)
    await sleep(4000)
    const triedWhileDown = posts
    recorded.failWith(undefined)
    await clicks(page, 'up', 5)
    await expectOnce(35, 30000)
    expect(clicked()).toEqual([...ids('down', 30), ...ids('up', 5)].sort())
    expect(triedWhileDown).toBeGreaterThan(0)
    expect(await page.evaluate(() => (window as any).discoveryFeedback.tracker.stats())).toMatchObject({ queued: 0, sent: 35 })
  }, 60000)

  it('a 1,000-event burst, then leaving at once: every event once', async () => {
    const page = await open('/quiet')
    await clicks(page, 'burst', 1000)
    await leave(page)
    await expectOnce(1000)
    expect(clicked()).toEqual(ids('burst', 1000).sort())
  })

  it('the relay answering nothing (connections dropped) across two pages, then answering: every event once', async () => {
    mode = 'drop'
    const page = await open('/quiet')
    await clicks(page, 'one', 10)
    await flush(page)
    await sleep(500)
    await page.goto(url('/quiet?two'))
    await page.waitForFunction(() => (window as any).discoveryFeedback.tracker)
    await clicks(page, 'two', 10)
    await sleep(1500)
    expect(recorded.events()).toEqual([])
    expect(posts).toBeGreaterThan(0)
    mode = 'up'
    await clicks(page, 'three', 5)
    await expectOnce(25, 30000)
    expect(clicked()).toEqual([...ids('one', 10), ...ids('two', 10), ...ids('three', 5)].sort())
  }, 60000)

  it('connections dropped after the relay stored the batch (the answer lost): the resend is a duplicate, the sink has each once', async () => {
    const page = await open('/quiet')
    mode = 'lose'
    await clicks(page, 'lost', 20)
    await flush(page)
    await waitFor(() => recorded.events().length == 20, 'the first batch stored', 10000)
    await sleep(1500)
    mode = 'up'
    await clicks(page, 'more', 5)
    await leave(page)
    await expectOnce(25, 30000)
    expect(clicked()).toEqual([...ids('lost', 20), ...ids('more', 5)].sort())
    // The page sent the lost batch again (or asked about it), and the store knew it.
    expect(duplicates).toBeGreaterThanOrEqual(20)
  }, 60000)
})

describe('the uid cookie from the relay', () => {
  // Safari keeps a cookie written by script for 7 days at most. The same cap here, on the
  // tracker's own writes, tells the two apart: a df_uid that lasts 400 days was set by the
  // relay's answer.
  const capScriptCookies = (into: BrowserContext) =>
    into.addInitScript(() => {
      const cookie = Object.getOwnPropertyDescriptor(Document.prototype, 'cookie')!
      Object.defineProperty(Document.prototype, 'cookie', {
        configurable: true,
        get() {
          return cookie.get!.call(this)
        },
        set(value: string) {
          cookie.set!.call(
            this,
            value.replace(/max-age=(\d+)/i, (_, seconds) => 'max-age=' + Math.min(Number(seconds), 7 * 86400))
          )
        }
      })
    })
  const uidCookie = async () => (await context.cookies()).find((cookie) => cookie.name == 'df_uid')!
  const daysLeft = (cookie: { expires: number }) => (cookie.expires * 1000 - Date.now()) / 864e5

  it('the page’s request carries it, the answer renews it for 400 days with the storefront’s attributes, the next page reads it', async () => {
    await capScriptCookies(context)
    const page = await open('/quiet')
    await clicks(page, 'first', 1)
    expect(daysLeft(await uidCookie())).toBeLessThanOrEqual(7)
    await flush(page)
    await expectOnce(1)
    const uid = recorded.events()[0].user.uid
    // Same origin, default credentials: the relay saw the shopper's cookie.
    expect(cookieHeaders.at(-1)).toContain('df_uid=' + uid)
    const cookie = await uidCookie()
    expect(cookie).toMatchObject({ value: uid, path: '/', sameSite: 'Lax', httpOnly: false, secure: false, domain: 'localhost' })
    expect(daysLeft(cookie)).toBeGreaterThan(399.9)
    expect(daysLeft(cookie)).toBeLessThanOrEqual(400)

    await page.goto(url('/quiet?next'))
    await page.waitForFunction(() => (window as any).discoveryFeedback.tracker)
    await clicks(page, 'second', 1)
    await leave(page)
    await expectOnce(2)
    expect(recorded.events().map((event) => event.user.uid)).toEqual([uid, uid])
    expect(daysLeft(await uidCookie())).toBeGreaterThan(399.9)
  })

  it('with cookie: false the relay leaves the tracker’s own cookie (7 days here): what the test above tells apart', async () => {
    startRelay({ cookie: false })
    await capScriptCookies(context)
    const page = await open('/quiet')
    await clicks(page, 'first', 1)
    await flush(page)
    await expectOnce(1)
    expect(daysLeft(await uidCookie())).toBeLessThanOrEqual(7)
  })
})

describe('the uid cookie only where the tracker keeps one', () => {
  it("with storage: 'memory' the relay writes no df_uid cookie either", async () => {
    pages.set('/memory', shop('data-auto-view-page="false" data-storage="memory"'))
    const page = await open('/memory')
    await clicks(page, 'memory', 1)
    await flush(page)
    await expectOnce(1)
    expect(await page.evaluate(() => document.cookie)).toBe('')
    expect(await context.cookies()).toEqual([])
  })

  it('after reset() (a logout) the relay does not bring the last shopper’s uid back', async () => {
    const page = await open('/quiet')
    await clicks(page, 'before', 3)
    await page.evaluate(() => (window as any).discoveryFeedback.tracker.reset())
    await expectOnce(3)
    await page.goto(url('/quiet?next'))
    await page.waitForFunction(() => (window as any).discoveryFeedback.tracker)
    await clicks(page, 'after', 1)
    await leave(page)
    await expectOnce(4)
    const uids = recorded.events().map((event) => event.user.uid)
    expect(uids[3]).not.toBe(uids[0])
  })
})
