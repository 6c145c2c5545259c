import { readFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { chromium, type Browser, type Page } from 'playwright-core'
import type { Envelope } from '../../src/types'

/** One request the collector saw, as the network delivered it. */
export interface Received {
  method: string
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
      const status = request.method == 'POST' ? answer(request) : 204
      const delivered = request.method == 'POST' && status < 300
      requests.push({
        method: request.method!,
        contentType: request.headers['content-type'],
        bytes: body.length,
        events: delivered ? JSON.parse(body.toString('utf8')) : [],
        query: new URL(request.url!, 'http://x').searchParams
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
    /** Every event delivered so far, in arrival order. */
    events: () => requests.flatMap((request) => request.events),
    answerWith: (decide: (request: IncomingMessage) => number) => (answer = decide),
    clear: () => requests.splice(0),
    close: () => stop(server)
  }
}

const file = (path: string) => readFileSync(new URL(path, import.meta.url))

const STATIC: Record<string, () => Buffer> = {
  '/discovery-feedback.min.js': () => file('../../dist/discovery-feedback.min.js'),
  '/esm/index.mjs': () => file('../../dist/index.mjs'),
  '/esm/nanoid.js': () => file('../../node_modules/nanoid/index.browser.js'),
  '/esm/url-alphabet/index.js': () => file('../../node_modules/nanoid/url-alphabet/index.js'),
  '/esm/js-cookie.mjs': () => file('../../node_modules/js-cookie/dist/js.cookie.mjs')
}

/** The README's stub, verbatim. */
export const STUB =
  '<script>window.discoveryFeedback=window.discoveryFeedback||function(){(discoveryFeedback.q=discoveryFeedback.q||[]).push(arguments)};</script>'

/** Import map that lets a page `import { createTracker } from 'discovery-feedback'`. */
export const IMPORT_MAP =
  '<script type="importmap">{"imports":{"discovery-feedback":"/esm/index.mjs","nanoid":"/esm/nanoid.js","js-cookie":"/esm/js-cookie.mjs"}}</script>'

/** Serves the builds and the pages a test registers, on an origin other than the collector's. */
export async function startPages() {
  const pages = new Map<string, string>()
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const path = new URL(request.url!, 'http://x').pathname
    if (STATIC[path]) {
      response.writeHead(200, { 'content-type': 'text/javascript' }).end(STATIC[path]())
    } else if (pages.has(path)) {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(pages.get(path))
    } else {
      response.writeHead(404).end()
    }
  })
  const port = await listen(server)
  return {
    origin: `http://localhost:${port}`,
    page: (path: string, html: string) => pages.set(path, '<!doctype html><meta charset="utf-8">' + html),
    close: () => stop(server)
  }
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

// Playwright turns the back/forward cache off by default; shoppers' browsers have it on.
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

/** Polls until `check` holds; fails with `what` after `timeout` ms. */
export async function waitFor(check: () => boolean, what: string, timeout = 10000) {
  const end = Date.now() + timeout
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out waiting for ' + what)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

/** Leaves the page for real (pagehide, then the document goes), as a shopper closing it would. */
export const leave = (page: Page) => page.goto('about:blank')

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
