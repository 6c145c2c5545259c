// @vitest-environment node
import { createServer, type Server } from 'node:http'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, it } from 'vitest'
import type { Envelope } from '../../src/index'
import { launch, leave, startDemoCollector, startPages, startServers, STUB, watch, whenQuiet, type Servers } from '../support/harness'
import { sleep, waitFor } from '../support/wait'

/*
 * What reaches the wire in real Chromium: how many envelopes a collector receives per tracked
 * event on a shopper's walk, how many requests a stream of clicks costs at a given answer
 * latency, how many requests are in flight at once, and what a beacon the collector failed
 * costs once the next page has asked about it. Every run prints its numbers (`wire: …`).
 */

let browser: Browser

beforeAll(async () => {
  browser = await launch()
})
afterAll(async () => {
  await browser?.close()
})

// Records, on every document, whether it was shown from the back/forward cache, and wraps
// fetch to count the requests the page has outstanding at once (the library uses the page's
// fetch as it finds it).
const OBSERVE = () => {
  const w = window as any
  w.__shows = 0
  addEventListener('pageshow', (event) => {
    w.__shows++
    w.__restored = event.persisted
  })
  const original = window.fetch
  w.__inFlight = 0
  w.__maxInFlight = 0
  window.fetch = function (this: unknown, ...args: Parameters<typeof fetch>) {
    w.__inFlight++
    w.__maxInFlight = Math.max(w.__maxInFlight, w.__inFlight)
    const answer = original.apply(this, args)
    const done = () => w.__inFlight--
    answer.then(done, done)
    return answer
  } as typeof fetch
}

const SCRIPT_TAG = (endpoint: string, attributes = '') =>
  STUB + `<script async src="/discovery-feedback.min.js" data-key="KEY" data-endpoint="${endpoint}" ${attributes}></script>`

/** Page `n` of the shop: a link to page n + 1 whose click handler tracks `window.clickId`. */
const shopPage = (n: number) =>
  SCRIPT_TAG('{{collector}}') +
  `<title>Page ${n}</title><h1>Page ${n}</h1><a id="next" href="/shop/${n + 1}">next</a>` +
  `<script>window.track = (id) => discoveryFeedback('click-item', { item_id: id, variant_item_id: 'v-' + id });` +
  `document.getElementById('next').addEventListener('click', () => track(window.clickId))</script>`

const PAGES = 12
const LAST = PAGES
/** How long the last page stays open: past CHECK_AFTER (5 s) of every beacon of the walk. */
const LAST_OPEN = 6500
const DWELL = 300

type Way = 'link' | 'script' | 'tab' | 'bfcache'

interface Visit {
  url: string
  restored: boolean
  click: string
}

/** After a navigation: the document shown (loaded, or restored), then the dwell time. */
const arrived = async (page: Page, visits: Visit[], click: string) => {
  await page.waitForFunction(() => document.readyState == 'complete' && (window as any).__shows > 0 && (window as any).discoveryFeedback.tracker)
  const restored = await page.evaluate(() => (window as any).__restored === true)
  visits.push({ url: page.url(), restored, click })
}

/**
 * The walk over 12 pages, each left DWELL ms after it was shown, one click-item tracked per
 * page (right before leaving), then the last page, left open LAST_OPEN ms.
 */
async function walk(way: Way, servers: Servers, context: BrowserContext) {
  const url = (n: number) => servers.origin + '/shop/' + n
  const visits: Visit[] = []
  const watchers: ReturnType<typeof watch>[] = []
  const watched = (page: Page) => watchers.push(watch(page))
  let page = await context.newPage()
  watched(page)
  await page.goto(url(0))

  /** Tracks the visit's click-item and leaves by script; waits for the next page to be shown. */
  const byScript = async (click: string, target: string, how: 'href' | 'back' | 'forward') => {
    await Promise.all([
      page.waitForURL(target, { waitUntil: 'commit' }),
      page.evaluate(
        ([id, next, how]) => {
          ;(window as any).track(id)
          if (how == 'back') history.back()
          else if (how == 'forward') history.forward()
          else location.href = next
        },
        [click, target, how] as const
      )
    ])
  }

  if (way == 'bfcache') {
    // Pairs of pages: a, b, back to a, forward to b, then the next pair.
    const plan: [number, 'href' | 'back' | 'forward'][] = []
    for (let pair = 0; pair < PAGES / 4; pair++) plan.push([2 * pair, 'href'], [2 * pair + 1, 'href'], [2 * pair, 'back'], [2 * pair + 1, 'forward'])
    // plan[i] is how visit i was reached; visit 0 was the goto above.
    for (let i = 0; i < PAGES; i++) {
      const click = 'visit-' + i
      await arrived(page, visits, click)
      await sleep(DWELL)
      const [n, how] = i + 1 < PAGES ? plan[i + 1] : [LAST, 'href' as const]
      await byScript(click, url(n), how)
    }
  } else {
    for (let n = 0; n < PAGES; n++) {
      const click = 'visit-' + n
      await arrived(page, visits, click)
      await sleep(DWELL)
      if (way == 'link') {
        await page.evaluate((id) => ((window as any).clickId = id), click)
        await Promise.all([page.waitForURL(url(n + 1), { waitUntil: 'commit' }), page.click('#next')])
      } else if (way == 'script') {
        await byScript(click, url(n + 1), 'href')
      } else {
        await page.evaluate((id) => (window as any).track(id), click)
        await page.close()
        page = await context.newPage()
        watched(page)
        await page.goto(url(n + 1))
      }
    }
  }
  // The last page: its own view-page, and time for the unconfirmed checks.
  await arrived(page, visits, '')
  await sleep(LAST_OPEN)
  await whenQuiet(() => servers.collector.requests.length, 500)
  const maxInFlight = await page.evaluate(() => (window as any).__maxInFlight)
  await page.close()
  return { visits, errors: watchers.flatMap((seen) => seen.pageErrors), maxInFlight }
}

// One walk at a time: run side by side on two cores, pages live longer than a shopper's would.
describe('a shopper walks 12 pages, 300 ms each, a view-page and a click-item per page', () => {
  it.for<Way>(['link', 'script', 'tab', 'bfcache'])(
    'leaving by %s: ≤ 1.02 envelopes per event, every event received',
    async (way, { expect }) => {
      const servers = await startServers()
      const context = await browser.newContext()
      await context.addInitScript(OBSERVE)
      try {
        for (let n = 0; n <= LAST; n++) servers.page('/shop/' + n, shopPage(n))
        const { visits, errors, maxInFlight } = await walk(way, servers, context)
        const received = servers.collector.received()
        const posts = servers.posts()
        // 12 view-pages and 12 click-items, plus the view-page of the last page.
        const tracked = 2 * PAGES + 1
        const ratio = received.length / tracked
        const views = received.filter((event) => event.event == 'view-page')
        const clicks = received.filter((event) => event.event == 'click-item')
        const uniqueViews = new Set(views.map((event) => event.event_id))
        const uniqueClicks = new Set(clicks.map((event) => event.event_id))
        const checks = posts.filter((request) => request.query.has('unconfirmed'))
        const summary = {
          way,
          tracked,
          received: received.length,
          perEvent: Number(ratio.toFixed(3)),
          uniqueViews: uniqueViews.size,
          uniqueClicks: uniqueClicks.size,
          posts: posts.length,
          beacons: posts.filter((request) => request.mode == 'no-cors').length,
          fetches: posts.filter((request) => request.mode == 'cors').length,
          unconfirmedChecks: checks.length,
          checksWithoutEvents: checks.filter((request) => !request.events.length).length,
          restored: visits.filter((visit) => visit.restored).length,
          maxInFlightLastPage: maxInFlight
        }
        console.log('wire: walk ' + JSON.stringify(summary))
        const duplicates = received.filter((event, i) => received.findIndex((other) => other.event_id == event.event_id) != i)
        expect(errors).toEqual([])
        expect(servers.preflights()).toEqual([])
        // Every click-item, by its item_id, at least once.
        const clicked = new Set(clicks.map((event) => (event as Envelope<'click-item'>).properties.item_id))
        expect(
          visits.filter((visit) => visit.click && !clicked.has(visit.click)).map((visit) => visit.click),
          'click-items never received'
        ).toEqual([])
        expect(uniqueClicks.size).toBe(PAGES)
        // Every view-page: one per visit, URLs in the order of the visits.
        expect(uniqueViews.size, 'distinct view-pages').toBe(visits.length)
        const firstOfEach = views.filter((event, i) => views.findIndex((other) => other.event_id == event.event_id) == i)
        expect(firstOfEach.map((event) => (event as Envelope<'view-page'>).properties.url).sort()).toEqual(visits.map((visit) => visit.url).sort())
        if (way == 'bfcache') expect(summary.restored, 'visits shown from the back/forward cache').toBe(PAGES / 2)
        expect(ratio, 'envelopes per tracked event; resent: ' + JSON.stringify(duplicates.map((event) => [event.event, event.event_id]))).toBeLessThanOrEqual(
          1.02
        )
      } finally {
        await context.close()
        await servers.close()
      }
    },
    60000
  )
})

/** A collector that answers every request `delay` ms late, and counts requests open at once. */
async function startSlowCollector(delay: number) {
  const posts: { events: Envelope[]; query: URLSearchParams; mode?: string }[] = []
  let open = 0
  let maxOpen = 0
  let others = 0
  const server: Server = createServer((request, response) => {
    open++
    maxOpen = Math.max(maxOpen, open)
    let closed = false
    response.on('close', () => {
      if (!closed) open--
      closed = true
    })
    const chunks: Buffer[] = []
    request.on('data', (chunk) => chunks.push(chunk))
    request.on('end', () => {
      if (request.method == 'POST') {
        const url = new URL(request.url!, 'http://x')
        let events: Envelope[] = []
        try {
          events = JSON.parse(Buffer.concat(chunks).toString('utf8'))
        } catch {
          // A body that is not JSON counts as a POST without events.
        }
        posts.push({ events, query: url.searchParams, mode: request.headers['sec-fetch-mode'] })
      } else others++
      setTimeout(
        () =>
          response
            .writeHead(204, { 'access-control-allow-origin': '*', 'access-control-allow-headers': 'content-type', 'access-control-allow-methods': 'POST' })
            .end(),
        request.method == 'POST' ? delay : 0
      )
    })
  })
  const port = await new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)))
  return {
    url: `http://127.0.0.1:${port}/v3/feedback`,
    posts,
    received: () => posts.flatMap((post) => post.events),
    maxOpen: () => maxOpen,
    others: () => others,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

describe('300 clicks, one per task, against a collector answering late', () => {
  const CLICKS = 300
  it.for([0, 150, 1000])(
    'answers %i ms late: ≤ 20 requests, each event once, ≤ 6 in flight',
    async (delay, { expect }) => {
      const [collector, pages] = await Promise.all([startSlowCollector(delay), startPages()])
      const context = await browser.newContext()
      await context.addInitScript(OBSERVE)
      try {
        pages.page(
          '/clicks',
          SCRIPT_TAG(collector.url, 'data-auto-view-page="false"') +
            `<script>window.run = (count) => new Promise((done) => {
            let i = 0
            const step = () => {
              discoveryFeedback('click-item', { item_id: 'c-' + i, variant_item_id: 'v' })
              if (++i < count) setTimeout(step, 0)
              else done()
            }
            setTimeout(step, 0)
          })</script>`
        )
        const page = await context.newPage()
        const seen = watch(page)
        await page.goto(pages.origin + '/clicks')
        await page.waitForFunction(() => (window as any).discoveryFeedback.tracker)
        const started = Date.now()
        await page.evaluate((count) => (window as any).run(count), CLICKS)
        const clicking = Date.now() - started
        await waitFor(() => new Set(collector.received().map((event) => event.event_id)).size >= CLICKS, CLICKS + ' events', 15000).catch(() => {})
        await whenQuiet(() => collector.posts.length, Math.max(1500, delay + 500))
        const received = collector.received()
        const ids = received.map((event) => (event as Envelope<'click-item'>).properties.item_id)
        const pageMax = await page.evaluate(() => (window as any).__maxInFlight)
        const summary = {
          delay,
          clickingMs: clicking,
          requests: collector.posts.length,
          received: received.length,
          unique: new Set(received.map((event) => event.event_id)).size,
          batchSizes: collector.posts.map((post) => post.events.length),
          maxInFlightServer: collector.maxOpen(),
          maxInFlightPage: pageMax,
          beacons: collector.posts.filter((post) => post.mode == 'no-cors').length
        }
        console.log('wire: clicks ' + JSON.stringify(summary))
        expect(seen.pageErrors).toEqual([])
        expect(collector.others(), 'preflights or other requests').toBe(0)
        expect([...ids].sort()).toEqual(Array.from({ length: CLICKS }, (_, i) => 'c-' + i).sort())
        expect(received).toHaveLength(CLICKS)
        expect(collector.maxOpen(), 'requests open at the collector at once').toBeLessThanOrEqual(6)
        expect(pageMax, 'fetches outstanding in the page at once').toBeLessThanOrEqual(6)
        expect(collector.posts.length, 'requests for ' + CLICKS + ' events').toBeLessThanOrEqual(20)
      } finally {
        await context.close()
        await Promise.all([collector.close(), pages.close()])
      }
    },
    60000
  )
})

describe('a collector that fails the exit beacon only', () => {
  it('503 to the beacon, healthy for the next page: nothing lost, each event stored once', async ({ expect }) => {
    const [collector, pages] = await Promise.all([startDemoCollector(), startPages()])
    const context = await browser.newContext()
    await context.addInitScript(OBSERVE)
    try {
      const shop = (name: string) =>
        SCRIPT_TAG(collector.url) +
        `<h1>${name}</h1><script>window.track = (id) => discoveryFeedback('click-item', { item_id: id, variant_item_id: 'v-' + id })</script>`
      pages.page('/fault/a', shop('A'))
      pages.page('/fault/b', shop('B'))
      const page = await context.newPage()
      const seen = watch(page)
      await page.goto(pages.origin + '/fault/a')
      await page.waitForFunction(() => (window as any).discoveryFeedback.tracker)
      await sleep(DWELL)
      const clicks = Array.from({ length: 5 }, (_, i) => 'fault-' + i)
      await page.evaluate((ids) => ids.forEach((id) => (window as any).track(id)), clicks)
      const before = collector.posts()
      collector.set(503)
      await leave(page)
      await waitFor(() => collector.posts() > before, 'the exit beacon', 10000)
      collector.set('up')
      const failedBeacons = collector.posts() - before
      await page.goto(pages.origin + '/fault/b')
      await page.waitForFunction(() => (window as any).discoveryFeedback.tracker)
      await sleep(7000)
      await whenQuiet(() => collector.posts(), 500)
      const stored = collector.stored()
      const expected = [...clicks.map((id) => 'click-item ' + id), 'view-page ' + pages.origin + '/fault/a', 'view-page ' + pages.origin + '/fault/b']
      const got = stored.map((event) =>
        event.event == 'click-item'
          ? 'click-item ' + (event as Envelope<'click-item'>).properties.item_id
          : event.event + ' ' + (event as Envelope<'view-page'>).properties.url
      )
      const lost = expected.filter((name) => !got.includes(name))
      const eventIds = stored.map((event) => event.event_id)
      const summary = {
        tracked: expected.length,
        stored: stored.length,
        lost: lost.length,
        lostEvents: lost,
        storedTwice: eventIds.length - new Set(eventIds).size,
        postsAfterLeaving: collector.posts() - before,
        answered503: failedBeacons
      }
      console.log('wire: 503-beacon ' + JSON.stringify(summary))
      expect(seen.pageErrors).toEqual([])
      expect(lost, 'events lost').toEqual([])
      expect(new Set(eventIds).size).toBe(eventIds.length)
      expect(got.sort()).toEqual(expected.sort())
    } finally {
      await context.close()
      await Promise.all([collector.close(), pages.close()])
    }
  }, 30000)
})
