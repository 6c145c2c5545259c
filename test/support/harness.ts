import { readFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { chromium, type Browser, type Page } from 'playwright-core'
import type { Envelope } from '../../src/index'

/** One request the collector saw, as the network delivered it. */
export interface Received {
  method: string
  /** Path without the query, e.g. `/v3/feedback`. */
  path: string
  /** Sec-Fetch-Mode: `no-cors` for a beacon with a text body, `cors` for the library's fetch. */
  mode: string | undefined
  contentType: string | undefined
  bytes: number
  events: Envelope[]
  query: URLSearchParams
}

const listen = (server: Server) =>
  new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)))

const stop = (server: Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => resolve())
  })

/**
 * A collector that records every request, on its own origin. `answer` decides the status of
 * each POST, so delivery tests can make it fail; a failing POST records nothing as delivered.
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
      // Only the route the library is configured with takes events: a request sent anywhere
      // else is a bug the tests must see, not a delivery.
      const routed = url.pathname == '/v3/feedback'
      let status = request.method == 'POST' ? (routed ? answer(request) : 404) : 204
      let events: Envelope[] = []
      if (request.method == 'POST' && status < 300) {
        try {
          events = JSON.parse(body.toString('utf8'))
          if (!Array.isArray(events)) throw new TypeError('not an array')
        } catch {
          // The wire format is a JSON array of envelopes; anything else is refused and recorded.
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
    /** Every event delivered so far, in arrival order, each event_id once (as a collector stores them). */
    events: () => {
      const seen = new Set<string>()
      return requests.flatMap((request) => request.events).filter((event) => !seen.has(event.event_id) && seen.add(event.event_id))
    },
    /** Every event as received, resends included. */
    received: () => requests.flatMap((request) => request.events),
    answerWith: (decide: (request: IncomingMessage) => number) => (answer = decide),
    clear: () => requests.splice(0),
    close: () => stop(server)
  }
}

const file = (path: string) => readFileSync(new URL(path, import.meta.url))

const STATIC: Record<string, () => Buffer> = {
  '/discovery-feedback.min.js': () => file('../../dist/discovery-feedback.min.js'),
  '/discovery-feedback-declarative.min.js': () => file('../../dist/discovery-feedback-declarative.min.js'),
  '/esm/index.mjs': () => file('../../dist/index.mjs'),
  '/esm/nanoid.js': () => file('../../node_modules/nanoid/index.browser.js'),
  '/esm/url-alphabet/index.js': () => file('../../node_modules/nanoid/url-alphabet/index.js'),
  '/esm/js-cookie.mjs': () => file('../../node_modules/js-cookie/dist/js.cookie.mjs'),
  '/fuzz.mjs': () => file('./fuzz.mjs')
}

/** The README's stub, verbatim. */
export const STUB =
  '<script>window.discoveryFeedback=typeof discoveryFeedback=="function"?discoveryFeedback:function(){(discoveryFeedback.q=discoveryFeedback.q||[]).push(arguments)};</script>'

/** Import map that lets a page `import { createTracker } from 'discovery-feedback'`. */
export const IMPORT_MAP =
  '<script type="importmap">{"imports":{"discovery-feedback":"/esm/index.mjs","nanoid":"/esm/nanoid.js","js-cookie":"/esm/js-cookie.mjs"}}</script>'

/** Serves the builds and the pages a test registers, on an origin other than the collector's. */
export async function startPages() {
  const pages = new Map<string, [html: string, headers?: (request: IncomingMessage) => Record<string, string>]>()
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url!, 'http://x')
    const path = url.pathname
    if (STATIC[path]) {
      // `?delay=ms` holds a build back, so that what a page does before the script runs
      // (the stub's queue) does not depend on how fast the loopback is.
      const delay = Number(url.searchParams.get('delay')) || 0
      setTimeout(() => response.writeHead(200, { 'content-type': 'text/javascript' }).end(STATIC[path]()), delay)
    } else if (path == '/favicon.ico') {
      // Answered, so that Chromium's automatic request leaves no 404 among a page's console errors.
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
    /** Registers a page; `headers` may add response headers, e.g. a server-set cookie. */
    page: (path: string, html: string, headers?: (request: IncomingMessage) => Record<string, string>) =>
      pages.set(path, ['<!doctype html><meta charset="utf-8">' + html, headers]),
    close: () => stop(server)
  }
}

/** What a page template may refer to: the page server's origin and the collector's URL. */
export interface Urls {
  origin: string
  collector: string
}

/**
 * The page server and the collector together, on two loopback ports: the page's origin
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
    /** POSTs that reached the collector's route. */
    posts: () => collector.requests.filter((request) => request.method == 'POST'),
    /** CORS preflights: a text/plain body never needs one, so any here is a bug. */
    preflights: () => collector.requests.filter((request) => request.method == 'OPTIONS'),
    close: () => Promise.all([collector.close(), pages.close()]).then(() => {})
  }
}

export type Servers = Awaited<ReturnType<typeof startServers>>

/**
 * Waits until `count()` has not changed for `quiet` ms, so that an assertion that something
 * arrived exactly once also catches a late duplicate. Fails after `timeout` ms of activity.
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
 * Why Chromium kept a page out of the back/forward cache, from CDP; empty when nothing stood
 * in its way. Call before the navigation that should put the page into the cache.
 */
export async function bfcacheBlockers(page: Page) {
  const reasons: string[] = []
  const cdp = await page.context().newCDPSession(page)
  cdp.on('Page.backForwardCacheNotUsed', (event) => reasons.push(...event.notRestoredExplanations.map((why) => why.reason)))
  await cdp.send('Page.enable')
  return reasons
}

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync'
]

// Playwright passes --disable-back-forward-cache by default; shoppers' browsers have the cache
// on. With that flag Chromium reports BackForwardCacheDisabledByCommandLine for every page
// (CDP Page.backForwardCacheNotUsed), and headless Chromium 156 restores plain http pages
// without it, so nothing else is needed.
export const launch = (): Promise<Browser> =>
  chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS, ignoreDefaultArgs: ['--disable-back-forward-cache'] })

/** Collects what the page shows the developer: uncaught errors and console errors. */
export function watch(page: Page) {
  const pageErrors: string[] = []
  const consoleErrors: string[] = []
  page.on('pageerror', (error) => pageErrors.push(error.message))
  page.on('console', (message) => {
    if (message.type() == 'error') consoleErrors.push(message.text())
  })
  return { pageErrors, consoleErrors }
}

/**
 * Polls until `check` holds; fails after `timeout` ms naming `what`. Called as
 * `waitFor(check, timeoutMs)` the predicate's source names it.
 */
export async function waitFor(check: () => boolean, what: string | number = 10000, timeout = 10000) {
  if (typeof what == 'number') [timeout, what] = [what, check.toString()]
  const end = Date.now() + timeout
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out waiting for ' + what)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

/** Leaves the page for real (pagehide, then the document goes), as a shopper closing it would. */
export const leave = (page: Page) => page.goto('about:blank')

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * The demo's reference collector (demo/collector.mjs) behind a switch, for fault tests:
 * 'up' serves it, 'down' drops every connection, a number answers that status.
 */
export async function startDemoCollector() {
  const { mkdtempSync, readFileSync: read, existsSync } = await import('node:fs')
  const { tmpdir } = await import('node:os')
  const { join } = await import('node:path')
  // @ts-expect-error plain ES module without types
  const { createCollector } = await import('../../demo/collector.mjs')
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
    set: (next: typeof mode) => (mode = next),
    posts: () => posts,
    stored,
    /** item_id of every stored click-item, sorted: the set a scenario must match exactly. */
    clicks: () =>
      stored()
        .filter((event) => event.event == 'click-item')
        .map((event) => String(event.properties.item_id))
        .sort(),
    close: async () => {
      await stop(server)
      collector.close()
    }
  }
}

/** The ids `prefix-0` … `prefix-(count-1)`, sorted as `clicks()` sorts them. */
export const ids = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => prefix + '-' + i).sort()
