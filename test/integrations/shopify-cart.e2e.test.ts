// @vitest-environment node
// The Shopify cart writer's script tag in Chromium, on a stand-in of a Shopify storefront: its
// theme pages with the tracker's tag and the writer's, and the AJAX Cart API as Shopify documents
// it (GET /cart.js answers the cart with its `attributes`; POST /cart/update.js with
// `{ attributes }` merges them in; the cart is the shopper's by its `cart` cookie). What the cart
// holds at the end is what Shopify copies into the order's note_attributes.
import { readFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { launchEngine, type Engine, type EnginePage } from '../support/engines'
import { STUB } from '../support/harness'

const dist = (name: string) => readFileSync(new URL('../../dist/' + name, import.meta.url))

/** The storefront stand-in: pages, the two script tags, a collector that takes anything, and the carts. */
async function startStorefront() {
  const carts = new Map<string, Record<string, unknown>>()
  const requests: string[] = []
  let next = 0
  const body = (request: IncomingMessage) =>
    new Promise<string>((resolve) => {
      let text = ''
      request.on('data', (chunk) => (text += chunk))
      request.on('end', () => resolve(text))
    })
  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const path = new URL(request.url!, 'http://x').pathname
    const token = /(?:^|; )cart=([^;]+)/.exec(request.headers.cookie || '')?.[1]
    const json = (value: unknown, headers: Record<string, string> = {}) =>
      response.writeHead(200, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(value))
    if (path == '/cart.js' || path == '/cart/update.js') requests.push(request.method + ' ' + path)
    if (path == '/cart.js') return json({ token: token || null, attributes: (token && carts.get(token)) || {}, item_count: 0, items: [] })
    if (path == '/cart/update.js' && request.method == 'POST') {
      // Shopify makes the cart on its first change, and keeps it under the cart cookie.
      const cart = token || 'c' + ++next
      const { attributes = {} } = JSON.parse(await body(request))
      carts.set(cart, { ...carts.get(cart), ...attributes })
      return json({ token: cart, attributes: carts.get(cart) }, token ? {} : { 'set-cookie': 'cart=' + cart + '; path=/' })
    }
    if (path == '/discovery-feedback.min.js') {
      // `?delay=ms` holds the tracker back, so that the cart writer's tag loads first and queues its add-on.
      await new Promise((resolve) => setTimeout(resolve, Number(new URL(request.url!, 'http://x').searchParams.get('delay')) || 0))
      return response.writeHead(200, { 'content-type': 'text/javascript' }).end(dist('discovery-feedback.min.js'))
    }
    if (path == '/discovery-feedback-shopify-cart.min.js')
      return response.writeHead(200, { 'content-type': 'text/javascript' }).end(dist('discovery-feedback-shopify-cart.min.js'))
    if (path == '/collect') return response.writeHead(200, { 'content-type': 'application/json' }).end('{"accepted":1,"duplicates":0,"rejected":[]}')
    if (path.startsWith('/products/') || path == '/') {
      const query = new URL(request.url!, 'http://x').searchParams
      const consent = query.get('consent')
      const delay = query.get('delay') || '0'
      return response
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(
          '<!doctype html><meta charset="utf-8">' +
            STUB +
            (consent ? `<script>discoveryFeedback('consent', '${consent}')</script>` : '') +
            `<script async src="/discovery-feedback.min.js?delay=${delay}" data-key="KEY" data-endpoint="/collect"></script>` +
            '<script async src="/discovery-feedback-shopify-cart.min.js"></script>'
        )
    }
    response.writeHead(404).end()
  }
  const server = createServer((request, response) => void handle(request, response))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    origin: 'http://127.0.0.1:' + (server.address() as AddressInfo).port,
    carts,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

describe('the Shopify cart writer (dist/discovery-feedback-shopify-cart.min.js) in chromium', () => {
  let engine: Engine
  let shop: Awaited<ReturnType<typeof startStorefront>>
  const opened: EnginePage[] = []
  beforeAll(async () => {
    engine = await launchEngine('chromium')
  }, 60000)
  afterAll(async () => {
    await engine?.close()
  })
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((page) => page.close().catch(() => {})))
    await shop?.close()
  })
  const open = async () => {
    const page = await engine.newPage()
    opened.push(page)
    return page
  }
  const ids = (page: EnginePage) =>
    page.evaluate<{ uid: string; sid: string }>('({ uid: discoveryFeedback.tracker.user.uid, sid: discoveryFeedback.tracker.user.sid })')

  it("writes the tracker's uid and sid into the cart's attributes, and writes nothing more while the cart holds them", async () => {
    shop = await startStorefront()
    const page = await open()
    await page.goto(shop.origin + '/')
    await page.waitForFunction('window.discoveryFeedback && discoveryFeedback.tracker')
    const user = await ids(page)
    await page.waitForFunction(`document.cookie.includes('cart=')`)
    expect([...shop.carts.values()]).toEqual([{ _df_uid: user.uid, _df_sid: user.sid }])
    // The next pages of the visit read the cart and leave it as it is.
    await page.goto(shop.origin + '/products/hoodie')
    await page.waitForFunction('window.discoveryFeedback && discoveryFeedback.tracker')
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(await ids(page)).toEqual(user)
    expect(shop.requests).toEqual(['GET /cart.js', 'POST /cart/update.js', 'GET /cart.js'])
  })

  it('writes them again into a new cart, as after an order', async () => {
    shop = await startStorefront()
    const page = await open()
    await page.goto(shop.origin + '/')
    await page.waitForFunction(`document.cookie.includes('cart=')`)
    // The order is placed: Shopify starts a new cart, without attributes.
    await page.evaluate(`document.cookie = 'cart=; path=/; max-age=0'`)
    await page.goto(shop.origin + '/products/hoodie')
    await page.waitForFunction(`document.cookie.includes('cart=')`)
    const user = await ids(page)
    expect([...shop.carts.values()]).toEqual([
      { _df_uid: user.uid, _df_sid: user.sid },
      { _df_uid: user.uid, _df_sid: user.sid }
    ])
  })

  it.each(['0', '400'])("reads and writes no cart while the shopper's consent is denied (the tracker's tag held back %s ms)", async (delay) => {
    shop = await startStorefront()
    const page = await open()
    // The page denies before the tracker has loaded: the call waits in the stub's queue, behind
    // the cart writer's add-on when the writer's tag came first.
    await page.goto(shop.origin + '/?consent=denied&delay=' + delay)
    await page.waitForFunction('window.discoveryFeedback && discoveryFeedback.tracker')
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(shop.requests).toEqual([])
    expect(shop.carts.size).toBe(0)
  })
})
