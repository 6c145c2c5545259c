// Support for the Shopify tests: a shop's origin serving the pixel host (demo/shopify/), a probe
// on another origin that records what a pixel sends it, a bundler for app pixels, and the calls
// that drive the host in a Playwright page.
import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { Page } from 'playwright-core'
import { bundleIife } from '../support/bundle'

const listen = (server: Server) => new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)))
const stop = (server: Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => resolve())
  })

const HOST_FILES = ['/shopify/host.js', '/shopify/sandbox-runtime.js']

// A shop's page loads the host and leaves startPixelHost on window, for Playwright to call.
// (A dynamic import inside page.evaluate would not do: vitest rewrites import() in the test's
// functions before Playwright sends their text to the page.)
export const LOAD_HOST = `<script type="module">import { startPixelHost } from '/shopify/host.js'; window.startPixelHost = startPixelHost</script>`

/**
 * Starts a shop on `http://localhost:PORT`: it serves the pixel host's modules under /shopify/
 * and the pages a test registers. `/` is a page with LOAD_HOST and nothing else unless a test
 * registers another there.
 */
export async function startShop() {
  const pages = new Map<string, string>([['/', '<title>Shop</title>' + LOAD_HOST]])
  const server = createServer((request, response) => {
    const path = new URL(request.url!, 'http://x').pathname
    if (HOST_FILES.includes(path)) {
      response.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(readFileSync(new URL('../../demo' + path, import.meta.url)))
    } else if (pages.has(path)) {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><meta charset="utf-8">' + pages.get(path))
    } else {
      // Chromium's automatic favicon request is answered too, so that no 404 shows among a page's errors.
      response.writeHead(path == '/favicon.ico' ? 204 : 404).end()
    }
  })
  const port = await listen(server)
  return {
    origin: `http://localhost:${port}`,
    page: (path: string, html: string) => pages.set(path, html),
    close: () => stop(server)
  }
}

/** One request the probe received: its path, its Origin header and its body parsed as JSON. */
export interface Probed {
  path: string
  origin: string | undefined
  body: any
}

/**
 * Starts a probe on `http://127.0.0.1:PORT`, another origin and site than the shop's. It records
 * every POST and answers with CORS headers for any origin, as a collector would.
 */
export async function startProbe() {
  const received: Probed[] = []
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk) => chunks.push(chunk))
    request.on('end', () => {
      if (request.method == 'POST') {
        const text = Buffer.concat(chunks).toString('utf8')
        let body: unknown = text
        try {
          body = JSON.parse(text)
        } catch {
          // A body that is not JSON is kept as text.
        }
        received.push({ path: new URL(request.url!, 'http://x').pathname, origin: request.headers.origin, body })
      }
      response.writeHead(204, { 'access-control-allow-origin': '*', 'access-control-allow-headers': 'content-type' }).end()
    })
  })
  const port = await listen(server)
  return { url: `http://127.0.0.1:${port}`, received, close: () => stop(server) }
}

/**
 * Bundles an app pixel's entry, given as source text, into one classic script, as Shopify's CLI
 * builds an app pixel extension: imports are resolved from test/shopify/, browser builds first.
 * For example `import { register } from '@shopify/web-pixels-extension'; register((api) => ...)`.
 */
export const bundleAppPixel = (source: string): Promise<string> => bundleIife(source, { from: import.meta.url })

/** What a test gives the host (see startPixelHost in demo/shopify/host.js); everything but callbacks. */
export interface PixelOptions {
  sandbox: 'lax' | 'strict'
  code: string
  init?: unknown
  settings?: Record<string, unknown>
  clientId?: string
}

/**
 * Starts the pixel host in `page`, a shop's page with LOAD_HOST, and waits until the pixel's code
 * has run. The host stays in the page as `window.pixelHost`; `publish` and `setConsent` reach it
 * there. `before` are events published at once, before the pixel's code has run.
 */
export async function startPixel(page: Page, options: PixelOptions, before: [name: string, data: unknown][] = []) {
  await page.waitForFunction(() => (window as any).startPixelHost)
  return page.evaluate(
    async ({ options, before }) => {
      const host = (window as any).startPixelHost(options)
      ;(window as any).pixelHost = host
      const published = before.map(([name, data]) => host.publish(name, data))
      await host.ready
      return published
    },
    { options, before }
  )
}

/** Publishes a standard event through the page's host; resolves the whole event as the pixel receives it. */
export const publish = (page: Page, name: string, data: unknown = {}, overrides: Record<string, unknown> = {}) =>
  page.evaluate(({ name, data, overrides }) => (window as any).pixelHost.publish(name, data, overrides), { name, data, overrides })

/** Sends visitorConsentCollected through the page's host, with `changes` merged into the consent so far. */
export const setConsent = (page: Page, changes: Record<string, boolean>) => page.evaluate((changes) => (window as any).pixelHost.setConsent(changes), changes)

/** Lists the errors the pixel's code threw so far. */
export const pixelErrors = (page: Page): Promise<string[]> => page.evaluate(() => (window as any).pixelHost.errors.slice())
