import { readFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest'
import type { Envelope } from '../../src/index'
import { CHROMIUM_ARGS } from '../../bench/launch.mjs'
import { sleep } from './wait'
import { README_STUB } from './script-tags'

/** This is one request that the collector saw, as the network delivered it. */
export interface Received {
  method: string
  /** This is the path without the query, for example `/v3/feedback`. */
  path: string
  /** This is Sec-Fetch-Mode: `no-cors` for a beacon with a text body, `cors` for the library's fetch. */
  mode: string | undefined
  contentType: string | undefined
  bytes: number
  events: Envelope[]
  query: URLSearchParams
}

const listen = (server: Server) => new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)))

const stop = (server: Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => resolve())
  })

/**
 * Starts a collector on its own origin that records every request. `answer` decides the status
 * of each POST, so that delivery tests can make it fail. A failing POST records nothing as
 * delivered.
 */
export async function startCollector() {
  const requests: Received[] = []
  let answer: (request: IncomingMessage) => number = () => 204
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk) => chunks.push(chunk))
    request.on('end', () => {
      const body = Buffer.concat(chunks)
      const url = new URL(request.url!, 'http://x')
      // Only the route that the library is configured with takes events. A request sent anywhere
      // else is a bug that the tests must see, not a delivery.
      const routed = url.pathname == '/v3/feedback'
      let status = request.method == 'POST' ? (routed ? answer(request) : 404) : 204
      let events: Envelope[] = []
      if (request.method == 'POST' && status < 300) {
        try {
          events = JSON.parse(body.toString('utf8'))
          if (!Array.isArray(events)) throw new TypeError('not an array')
        } catch {
          // The wire format is a JSON array of envelopes. Anything else is refused and recorded.
          events = []
          status = 400
        }
      }
      requests.push({
        method: request.method!,
        path: url.pathname,
        mode: request.headers['sec-fetch-mode'],
        contentType: request.headers['content-type'],
        bytes: body.length,
        events,
        query: url.searchParams
      })
      response.writeHead(status, {
        'access-control-allow-origin': '*',
        'access-control-allow-headers': 'content-type',
        'access-control-allow-methods': 'POST'
      })
      response.end()
    })
  })
  const port = await listen(server)
  return {
    url: `http://127.0.0.1:${port}/v3/feedback`,
    requests,
    /**
     * Lists every event delivered so far in arrival order. Each event_id appears once, as a
     * collector would store it.
     */
    events: () => {
      const first = new Map<string, Envelope>()
      for (const event of requests.flatMap((request) => request.events)) {
        if (!first.has(event.event_id)) first.set(event.event_id, event)
      }
      return [...first.values()]
    },
    /** Lists every event as it was received, resends included. */
    received: () => requests.flatMap((request) => request.events),
    answerWith: (decide: (request: IncomingMessage) => number) => {
      answer = decide
    },
    clear: () => requests.splice(0),
    close: () => stop(server)
  }
}

const file = (path: string) => readFileSync(new URL(path, import.meta.url))

const STATIC: Record<string, () => Buffer> = {
  '/discovery-feedback.min.js': () => file('../../dist/discovery-feedback.min.js'),
  '/discovery-feedback-declarative.min.js': () => file('../../dist/discovery-feedback-declarative.min.js'),
  '/discovery-feedback-datalayer.min.js': () => file('../../dist/discovery-feedback-datalayer.min.js'),
  '/discovery-feedback-client.min.js': () => file('../../dist/discovery-feedback-client.min.js'),
  '/esm/index.mjs': () => file('../../dist/index.mjs'),
  '/fuzz.mjs': () => file('./fuzz.mjs')
}

/** The README's stub, verbatim, as a page's script element. */
export const STUB = '<script>' + README_STUB + '</script>'

/** This import map lets a page `import { createTracker } from 'discovery-feedback'`. */
export const IMPORT_MAP = '<script type="importmap">{"imports":{"discovery-feedback":"/esm/index.mjs"}}</script>'

/** Serves the builds and the pages that a test registers, on an origin other than the collector's. */
export async function startPages() {
  const pages = new Map<string, [html: string, headers?: (request: IncomingMessage) => Record<string, string>]>()
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url!, 'http://x')
    const path = url.pathname
    if (STATIC[path]) {
      // A `?delay=ms` query holds a build back, so that what a page does before the script runs
      // (filling the stub's queue) does not depend on how fast the loopback is.
      const delay = Number(url.searchParams.get('delay')) || 0
      setTimeout(() => response.writeHead(200, { 'content-type': 'text/javascript' }).end(STATIC[path]()), delay)
    } else if (path == '/favicon.ico') {
      // This is answered so that Chromium's automatic request leaves no 404 among a page's console errors.
      response.writeHead(204).end()
    } else if (pages.has(path)) {
      const [html, headers] = pages.get(path)!
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...(headers && headers(request)) }).end(html)
    } else {
      response.writeHead(404).end()
    }
  })
  const port = await listen(server)
  return {
    origin: `http://localhost:${port}`,
    /** Registers a page. `headers` may add response headers, for example a cookie set by the server. */
    page: (path: string, html: string, headers?: (request: IncomingMessage) => Record<string, string>) =>
      pages.set(path, ['<!doctype html><meta charset="utf-8">' + html, headers]),
    close: () => stop(server)
  }
}

/** A page template may refer to the page server's origin and to the collector's URL. */
export interface Urls {
  origin: string
  collector: string
}

/**
 * Starts the page server and the collector together, on two loopback ports. The page's origin
 * (`http://localhost:PORT`) and the collector's (`http://127.0.0.1:PORT`) differ in host and
 * port, so every request is cross-origin and cross-site, as from a shop to a SaaS collector.
 * A page's HTML may be a function of the URLs, or a string with `{{collector}}` and
 * `{{origin}}` in it.
 */
export async function startServers() {
  const [collector, pages] = await Promise.all([startCollector(), startPages()])
  const urls: Urls = { origin: pages.origin, collector: collector.url }
  return {
    ...urls,
    collector,
    page: (path: string, html: string | ((urls: Urls) => string), headers?: (request: IncomingMessage) => Record<string, string>) =>
      pages.page(
        path,
        typeof html == 'function' ? html(urls) : html.replaceAll('{{collector}}', urls.collector).replaceAll('{{origin}}', urls.origin),
        headers
      ),
    /** Lists the POSTs that reached the collector's route. */
    posts: () => collector.requests.filter((request) => request.method == 'POST'),
    /** Lists the CORS preflights. A text/plain body never needs one, so any preflight here is a bug. */
    preflights: () => collector.requests.filter((request) => request.method == 'OPTIONS'),
    close: () => Promise.all([collector.close(), pages.close()]).then(() => {})
  }
}

export type Servers = Awaited<ReturnType<typeof startServers>>

/**
 * Waits until `count()` has not changed for `quiet` ms, so that an assertion that something
 * arrived exactly once also catches a late duplicate. It fails after `timeout` ms of activity.
 */
export async function whenQuiet(count: () => number, quiet = 300, timeout = 10000) {
  const end = Date.now() + timeout
  let last = count()
  let since = Date.now()
  while (Date.now() - since < quiet) {
    if (Date.now() > end) throw new Error('still busy after ' + timeout + ' ms')
    await sleep(25)
    if (count() != last) [last, since] = [count(), Date.now()]
  }
}

/**
 * Collects from CDP the reasons why Chromium kept a page out of the back/forward cache. The list
 * stays empty when nothing stood in the way. Call it before the navigation that should put the
 * page into the cache.
 */
export async function bfcacheBlockers(page: Page) {
  const reasons: string[] = []
  const cdp = await page.context().newCDPSession(page)
  cdp.on('Page.backForwardCacheNotUsed', (event) => reasons.push(...event.notRestoredExplanations.map((why) => why.reason)))
  await cdp.send('Page.enable')
  return reasons
}

// The flags live beside the benchmarks' launch, so that both run Chromium alike.
export { CHROMIUM_ARGS }

// Playwright passes --disable-back-forward-cache by default, but shoppers' browsers have the cache
// on. With that flag Chromium reports BackForwardCacheDisabledByCommandLine for every page (CDP
// Page.backForwardCacheNotUsed). Without it, headless Chromium 156 restores plain http pages, so
// nothing else is needed.
export const launch = (): Promise<Browser> =>
  chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS, ignoreDefaultArgs: ['--disable-back-forward-cache'] })

/** Collects what the page shows the developer, which is its uncaught errors and console errors. */
export function watch(page: Page) {
  const pageErrors: string[] = []
  const consoleErrors: string[] = []
  page.on('pageerror', (error) => pageErrors.push(error.message))
  page.on('console', (message) => {
    if (message.type() == 'error') consoleErrors.push(message.text())
  })
  return { pageErrors, consoleErrors }
}

/** Leaves the page for real, as a shopper closing it would. Pagehide fires, then the document goes. */
export const leave = (page: Page) => page.goto('about:blank')

/**
 * Starts the demo's reference collector (src/collector/) behind a switch, for fault tests.
 * With 'up' it serves the collector, with 'down' it drops every connection, and with a number
 * it answers every POST with that status.
 */
export async function startDemoCollector() {
  const { mkdtempSync, readFileSync: read, existsSync } = await import('node:fs')
  const { tmpdir } = await import('node:os')
  const { join } = await import('node:path')
  const { createCollector } = await import('../../src/collector')
  const file = join(mkdtempSync(join(tmpdir(), 'df-collector-')), 'events.ndjson')
  const collector = createCollector({ file, keys: ['KEY'] })
  let mode: 'up' | 'down' | number = 'up'
  let posts = 0
  const server = createServer((request, response) => {
    if (request.method == 'POST') posts++
    if (mode == 'down') return request.socket.destroy()
    if (typeof mode == 'number' && request.method == 'POST') {
      response.writeHead(mode, { 'access-control-allow-origin': '*' }).end()
      return
    }
    collector.handle(request, response)
  })
  const port = await listen(server)
  const stored = (): (Envelope & { t_corrected: number })[] =>
    existsSync(file)
      ? read(file, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line))
      : []
  return {
    url: `http://127.0.0.1:${port}/v3/feedback`,
    set: (next: typeof mode) => {
      mode = next
    },
    posts: () => posts,
    stored,
    /** Lists the item_id of every stored click-item, sorted. A scenario must match this set exactly. */
    clicks: () =>
      stored()
        .filter((event) => event.event == 'click-item')
        .map((event) => String((event.properties as { item_id?: unknown }).item_id))
        .sort(),
    close: async () => {
      await stop(server)
      collector.close()
    }
  }
}

/** Lists the ids from `prefix-0` to `prefix-(count-1)`, sorted as `clicks()` sorts them. */
export const ids = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => prefix + '-' + i).sort()

/**
 * The hooks of a Chromium suite: one browser, page server and collector for the file, and for
 * each test a fresh context (no cookies, no storage of earlier tests) and a collector with
 * nothing recorded. Read the parts through the returned object once the hooks have run.
 */
export function chromiumSuite(contextOptions?: BrowserContextOptions) {
  const suite = {} as { browser: Browser; servers: Servers; context: BrowserContext }
  beforeAll(async () => {
    ;[suite.browser, suite.servers] = await Promise.all([launch(), startServers()])
  })
  afterAll(async () => {
    await suite.browser?.close()
    await suite.servers?.close()
  })
  beforeEach(async () => {
    suite.servers.collector.clear()
    suite.context = await suite.browser.newContext(contextOptions)
  })
  afterEach(async () => {
    await suite.context.close()
  })
  return suite
}
