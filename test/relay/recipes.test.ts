// @vitest-environment node
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Readable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServerTracker } from '../../src/server'
import { waitFor } from '../support/wait'
import { bodyOf, envelope, serve } from './support'

// The relay guide's recipes (test/relay/recipes/, shown in docs/guide/relay.md), each run as a shop would run it, over real
// HTTP, in front of a stand-in for the service. They import 'discovery-feedback/relay' by the
// package's own name, so they run the built dist/relay.mjs (`npx rollup -c` first).

const KEY = 'SHOP-KEY'
const METRICS_TOKEN = 'the-prometheus-token'
let service: Awaited<ReturnType<typeof serve>>
const forwarded: any[] = []
let serviceStatus = 200
const children: ChildProcess[] = []

beforeAll(async () => {
  service = await serve(async (request: IncomingMessage, response: ServerResponse) => {
    const body = await bodyOf(request)
    // forwardSink's default format: one SPEC envelope a request (an array from format 'batch').
    const parsed = JSON.parse(body)
    if (serviceStatus < 300) forwarded.push(...(Array.isArray(parsed) ? parsed : [parsed]))
    response.writeHead(serviceStatus, serviceStatus == 503 ? { 'retry-after': '3' } : {}).end()
  })
  process.env.DF_KEY = KEY
  process.env.DF_SERVICE_URL = service.origin + '/v3/events'
  process.env.DF_METRICS_TOKEN = METRICS_TOKEN
})
afterAll(async () => {
  for (const child of children) child.kill()
  await service?.close()
})

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })

/**
 * Runs a recipe file as its own Node process, as `node express.mjs` would, and waits until it
 * answers, and until it has said where it listens, as a person starting it waits to read.
 */
async function run(file: string, env: Record<string, string> = {}) {
  const port = await freePort()
  const child = spawn(process.execPath, [fileURLToPath(new URL('./recipes/' + file, import.meta.url))], {
    env: { ...process.env, PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  children.push(child)
  let printed = ''
  child.stdout!.on('data', (data) => (printed += data))
  const origin = `http://127.0.0.1:${port}`
  let up = false
  const started = Date.now()
  while (!up && Date.now() - started < 10000) {
    up = await fetch(origin + '/df/events', { method: 'OPTIONS' }).then(
      () => true,
      () => false
    )
    if (!up) await new Promise((resolve) => setTimeout(resolve, 50))
  }
  expect(up).toBe(true)
  await waitFor(() => printed.includes(`http://localhost:${port}/`), 'the line saying where ' + file + ' listens')
  return origin
}

// A shopper's browser: the recipes drop bots' events (the relay's default), and Node's fetch says `node`.
const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0'

/** Posts a batch as the tracker does from a browser: text/plain, with t_sent. */
async function post(url: string, events: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(url + '?t_sent=' + Date.now(), {
    method: 'POST',
    headers: { 'content-type': 'text/plain;charset=UTF-8', 'user-agent': BROWSER, ...headers },
    body: typeof events == 'string' ? events : JSON.stringify(events)
  })
  return { status: response.status, headers: response.headers, body: await response.json().catch(() => null) }
}

// The service sees no event ids: each event carries its id as its item_id.
const forwardedIds = (events: { event_id: string }[]) => forwarded.filter((event) => events.some((sent) => sent.event_id == event.properties.item_id))

const marked = () => {
  const event = envelope({ key: KEY })
  return { ...event, properties: { ...event.properties, item_id: event.event_id } }
}
const batch = () => [marked(), marked()]

/** A scrape of `url` with the bearer token given: its status and text. */
async function scrape(url: string, token?: string) {
  const response = await fetch(url, { headers: token ? { authorization: 'Bearer ' + token } : {} })
  return { status: response.status, type: response.headers.get('content-type'), text: await response.text() }
}

/** The accepted events a scrape counts. */
const acceptedIn = (text: string) => Number(/^df_relay_events_total\{outcome="accepted"\} (\d+)$/m.exec(text)?.[1])

/** The route serves the metrics with the token only, in Prometheus's text format, counting what the relay took. */
async function expectTokenGuarded(url: string) {
  for (const token of [undefined, 'a-guess']) expect((await scrape(url, token)).status).toBe(404)
  const scraped = await scrape(url, METRICS_TOKEN)
  expect(scraped.status).toBe(200)
  expect(scraped.type).toMatch(/^text\/plain; version=0\.0\.4/)
  expect(acceptedIn(scraped.text)).toBeGreaterThanOrEqual(2)
}

describe('Node http.createServer(toNodeHandler(relay))', () => {
  let origin: string
  let metricsPort: number
  beforeAll(async () => {
    metricsPort = await freePort()
    origin = await run('node.mjs', { METRICS_PORT: String(metricsPort) })
  })

  it('forwards a batch to the service once, with the peer as user.ip (a forged X-Forwarded-For ignored), and renews the uid cookie', async () => {
    const events = batch()
    const answer = await post(origin + '/df/events', events, { 'x-forwarded-for': '6.6.6.6', 'user-agent': BROWSER, cookie: 'df_uid=uid-1' })
    expect(answer).toMatchObject({ status: 200, body: { accepted: 2, duplicates: 0, rejected: [] } })
    expect(answer.headers.getSetCookie()).toEqual(['df_uid=uid-1; Path=/; Max-Age=34560000; SameSite=Lax'])
    const again = await post(origin + '/df/events', events)
    expect(again.body).toMatchObject({ accepted: 0, duplicates: 2 })
    const received = forwardedIds(events)
    expect(received.map((event) => event.properties.item_id)).toEqual(events.map((event) => event.event_id))
    expect(received.map((event) => event.user.ip)).toEqual(['127.0.0.1', '127.0.0.1'])
    expect(received[0].user.ua).toBe(BROWSER)
    expect(received[0]).not.toHaveProperty('received_at')
  })

  it('a body over 256 KiB: the client reads the 413, the connection is not reset', async () => {
    const answer = await post(origin + '/df/events', '[' + ' '.repeat(300 * 1024) + ']')
    expect(answer.status).toBe(413)
    expect(answer.body.error.message).toBe('body is larger than 262144 bytes')
  })

  it('a chunked body over 256 KiB: 413, and the relay keeps serving', async () => {
    const { port } = new URL(origin)
    const status = await new Promise<number>((resolve, reject) => {
      const request = httpRequest({ host: '127.0.0.1', port, path: '/df/events', method: 'POST', headers: { 'transfer-encoding': 'chunked' } }, (response) => {
        response.resume()
        resolve(response.statusCode!)
      })
      request.on('error', reject)
      let chunks = 0
      const more = () => {
        if (chunks++ < 5) request.write(' '.repeat(65536), more)
        else request.end()
      }
      request.write('[', more)
    })
    expect(status).toBe(413)
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect((await post(origin + '/df/events', batch(), { cookie: 'df_uid=uid-1' })).status).toBe(200)
  })

  it('the service answering 503: the relay answers 503 with Retry-After, and the events reach the service once when it is back', async () => {
    const events = batch()
    serviceStatus = 503
    try {
      const failed = await post(origin + '/df/events', events)
      expect(failed.status).toBe(503)
      expect(Number(failed.headers.get('retry-after'))).toBeGreaterThanOrEqual(2)
    } finally {
      serviceStatus = 200
    }
    expect(forwardedIds(events)).toEqual([])
    // The tracker waits out the Retry-After (3 s) and sends again.
    await new Promise((resolve) => setTimeout(resolve, 3100))
    expect((await post(origin + '/df/events', events)).body).toMatchObject({ accepted: 2 })
    expect(forwardedIds(events)).toHaveLength(2)
  }, 15000)

  it('405 for another method; a GET reaches the relay, which wants its event in the query', async () => {
    expect((await fetch(origin + '/df/events', { method: 'PUT', body: '[]' })).status).toBe(405)
    expect((await fetch(origin + '/df/events')).status).toBe(400)
  })

  it('serves the metrics on their own port, on the loopback, and not on the relay’s', async () => {
    const scraped = await scrape(`http://127.0.0.1:${metricsPort}/metrics`)
    expect(scraped.status).toBe(200)
    expect(scraped.type).toBe('text/plain; version=0.0.4')
    expect(acceptedIn(scraped.text)).toBeGreaterThanOrEqual(2)
    expect((await scrape(origin + '/metrics')).text).not.toContain('df_relay')
  })
})

describe("the shop's server sender through the Node recipe", () => {
  const SERVER_SECRET = 'the-shops-server-secret-0123456789'
  const shopper = { uid: 'uid-server-1', sid: 'sid-server-1', ip: '198.51.100.23', ua: 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X)' }
  const order = (orderId: string) => ({
    order_id: orderId,
    currency: 'EUR',
    revenue: 59.9,
    line_items: [{ item_id: 'server-item-' + orderId, variant_item_id: 'v1', unit_price: 59.9, quantity: 1 }]
  })
  const forwardedOrder = (orderId: string) => forwarded.filter((event) => event.event == 'purchase' && event.properties.order_id == orderId)

  it('without a secret: the purchase is reported undelivered, with an error naming serverSecrets, never counted as sent', async () => {
    const origin = await run('node.mjs', { METRICS_PORT: String(await freePort()), DF_SERVER_SECRET: '' })
    const errors: string[] = []
    const sender = createServerTracker({ key: KEY, endpoint: origin + '/df/events', flushInterval: 0, onError: (error) => errors.push(error.message) })
    sender.track('purchase', order('S-1'), shopper)
    await sender.close()
    expect(sender.stats()).toMatchObject({ sent: 0, queued: 0, dropped: { rejected: 1 } })
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatch(/^discovery-feedback: 1 event dropped: the collector answered 401: a server sender must prove itself .*serverSecrets/)
    expect(forwardedOrder('S-1')).toEqual([])
  })

  it("with the relay's secret: delivered once, with the shopper's ip and ua", async () => {
    const origin = await run('node.mjs', { METRICS_PORT: String(await freePort()), DF_SERVER_SECRET: SERVER_SECRET })
    const sender = createServerTracker({ key: KEY, endpoint: origin + '/df/events', secret: SERVER_SECRET, flushInterval: 0 })
    sender.track('purchase', order('S-2'), shopper)
    await sender.close()
    expect(sender.stats()).toMatchObject({ sent: 1, queued: 0, dropped: { rejected: 0 } })
    await waitFor(() => forwardedOrder('S-2').length == 1, 'the forwarded purchase')
    expect(forwardedOrder('S-2')[0].user).toMatchObject({ ip: shopper.ip, ua: shopper.ua, uid: shopper.uid })
  })
})

describe('Express 5', () => {
  let origin: string
  beforeAll(async () => {
    origin = await run('express.mjs')
  })

  it('behind one trusted proxy: user.ip is the address the proxy appended, not what the shopper wrote', async () => {
    const events = batch()
    const answer = await post(origin + '/df/events', events, { 'x-forwarded-for': '6.6.6.6, 198.51.100.23', cookie: 'df_uid=uid-1' })
    expect(answer).toMatchObject({ status: 200, body: { accepted: 2 } })
    await waitFor(() => forwardedIds(events).length == 2, 'the forwarded events')
    expect(forwardedIds(events).map((event) => event.user.ip)).toEqual(['198.51.100.23', '198.51.100.23'])
    expect(answer.headers.getSetCookie()).toEqual(['df_uid=uid-1; Path=/; Max-Age=34560000; SameSite=Lax'])
  })

  it('takes a JSON-typed body too (the route is before express.json()), and the rest of the shop still works', async () => {
    const events = batch()
    const answer = await post(origin + '/df/events', events, { 'content-type': 'application/json' })
    expect(answer).toMatchObject({ status: 200, body: { accepted: 2 } })
    expect(forwardedIds(events)).toHaveLength(2)
    expect(await (await fetch(origin + '/')).text()).toBe('shop')
  })

  it('refuses what the relay refuses, with its status', async () => {
    expect((await post(origin + '/df/events', [envelope({ key: 'OTHER' })])).status).toBe(403)
    expect((await post(origin + '/df/events', '{')).status).toBe(400)
  })

  it('serves /metrics to the bearer of the metrics token only', async () => {
    await expectTokenGuarded(origin + '/metrics')
  })
})

describe('Hono 4', () => {
  // hono ships no Node server (that is @hono/node-server, not installed here): this bridge does
  // what it does, a Request from the IncomingMessage and `app.fetch(request, { incoming, outgoing })`,
  // so `c.env.incoming` is what the recipe reads. Bun, Deno and workers call app.fetch themselves.
  let origin: string
  let close: () => Promise<void>
  beforeAll(async () => {
    const { default: app } = await import('./recipes/hono.mjs')
    const started = await serve(async (incoming: IncomingMessage, outgoing: ServerResponse) => {
      const headers = new Headers()
      for (const [name, value] of Object.entries(incoming.headers)) if (value != null) headers.set(name, String(value))
      const hasBody = incoming.method != 'GET' && incoming.method != 'HEAD'
      const request = new Request('http://' + incoming.headers.host + incoming.url, {
        method: incoming.method,
        headers,
        body: hasBody ? (Readable.toWeb(incoming) as ReadableStream) : undefined,
        duplex: 'half'
      } as RequestInit)
      const response: Response = await app.fetch(request, { incoming, outgoing })
      const out: Record<string, string | string[]> = Object.fromEntries(response.headers)
      if (response.headers.getSetCookie().length) out['set-cookie'] = response.headers.getSetCookie()
      outgoing.writeHead(response.status, out).end(Buffer.from(await response.arrayBuffer()))
    })
    origin = started.origin
    close = started.close
  })
  afterAll(() => close?.())

  it('relays a batch with the socket’s peer as user.ip', async () => {
    const events = batch()
    const answer = await post(origin + '/df/events', events, { 'x-forwarded-for': '6.6.6.6', cookie: 'df_uid=uid-1' })
    expect(answer).toMatchObject({ status: 200, body: { accepted: 2 } })
    expect(forwardedIds(events).map((event) => event.user.ip)).toEqual(['127.0.0.1', '127.0.0.1'])
    expect(answer.headers.getSetCookie()).toEqual(['df_uid=uid-1; Path=/; Max-Age=34560000; SameSite=Lax'])
    expect((await post(origin + '/df/events', events)).body).toMatchObject({ duplicates: 2 })
  })

  it('every method reaches the relay: OPTIONS 204, GET without an event 400, PUT 405', async () => {
    expect((await fetch(origin + '/df/events', { method: 'OPTIONS' })).status).toBe(204)
    expect((await fetch(origin + '/df/events')).status).toBe(400)
    expect((await fetch(origin + '/df/events', { method: 'PUT', body: '[]' })).status).toBe(405)
    expect((await fetch(origin + '/elsewhere')).status).toBe(404)
  })

  it('serves /metrics to the bearer of the metrics token only', async () => {
    await expectTokenGuarded(origin + '/metrics')
  })
})

describe('Next.js App Router route handler', () => {
  // Next is not installed: the exported POST, OPTIONS and GET are called as Next calls them, with a
  // Request (NextRequest extends it) and a context whose params is a promise (Next 15). Not
  // proven here: Next's own server (its URL, that it leaves the body unread for the handler,
  // its Edge bundling of the relay) and Vercel setting x-real-ip.
  type Handler = (request: Request, context: unknown) => Promise<Response>
  let route: { POST: Handler; OPTIONS: Handler; GET: Handler }
  beforeAll(async () => {
    route = await import('./recipes/app/df/events/route.js')
  })
  const context = { params: Promise.resolve({}) }

  it('POST relays the batch, user.ip from x-real-ip, the uid cookie Secure on https', async () => {
    const events = batch()
    const request = new Request('https://www.shop.example/df/events?t_sent=' + Date.now(), {
      method: 'POST',
      headers: { 'content-type': 'text/plain;charset=UTF-8', 'x-real-ip': '198.51.100.23', 'x-forwarded-for': '6.6.6.6', cookie: 'df_uid=from-cookie' },
      body: JSON.stringify(events)
    })
    const answer = await route.POST(request, context)
    expect(answer.status).toBe(200)
    expect(await answer.json()).toMatchObject({ accepted: 2 })
    expect(answer.headers.getSetCookie()).toEqual(['df_uid=from-cookie; Path=/; Max-Age=34560000; SameSite=Lax; Secure'])
    expect(forwardedIds(events).map((event) => event.user.ip)).toEqual(['198.51.100.23', '198.51.100.23'])
  })

  it("GET takes the service's feedback library's image request, answered with a GIF", async () => {
    const event = marked()
    const query = new URLSearchParams({
      key: KEY,
      event: 'click-item',
      'properties[item_id]': event.properties.item_id,
      'user[uid]': 'u1',
      'user[sid]': 's1',
      t_client: '1'
    })
    const answer = await route.GET(new Request('https://www.shop.example/df/events?' + query, { headers: { 'x-real-ip': '198.51.100.23' } }), context)
    expect(answer.status).toBe(200)
    expect(answer.headers.get('content-type')).toBe('image/gif')
    expect(forwardedIds([event])).toEqual([
      expect.objectContaining({ properties: { item_id: event.properties.item_id, variant_item_id: event.properties.item_id } })
    ])
  })

  it('OPTIONS answers the preflight', async () => {
    const answer = await route.OPTIONS(
      new Request('https://www.shop.example/df/events', { method: 'OPTIONS', headers: { 'access-control-request-method': 'POST' } }),
      context
    )
    expect(answer.status).toBe(204)
    expect(answer.headers.get('access-control-allow-methods')).toBe('POST, OPTIONS')
  })

  it('app/metrics/route.js serves the metrics to the bearer of the metrics token only', async () => {
    const metrics: { GET: Handler } = await import('./recipes/app/metrics/route.js')
    const serveFetch = await serve(async (incoming: IncomingMessage, outgoing: ServerResponse) => {
      const answer = await metrics.GET(
        new Request('https://www.shop.example/metrics', { headers: { authorization: String(incoming.headers.authorization || '') } }),
        context
      )
      outgoing.writeHead(answer.status, Object.fromEntries(answer.headers)).end(await answer.text())
    })
    try {
      await expectTokenGuarded(serveFetch.origin + '/metrics')
    } finally {
      await serveFetch.close()
    }
  })
})

describe('the relay guide (docs/guide/relay.md)', () => {
  it.each([
    'node.mjs',
    'express.mjs',
    'hono.mjs',
    'app/df/relay.js',
    'app/df/events/route.js',
    'app/metrics/route.js',
    'cluster-store.mjs',
    'cluster-store-ioredis.mjs'
  ])('shows the recipe %s as it is tested', (file) => {
    const recipe = readFileSync(fileURLToPath(new URL('./recipes/' + file, import.meta.url)), 'utf8')
      .split('\n')
      // The ESLint line of the Next.js file is this repository's, not the recipe's.
      .filter((line) => !line.startsWith('/* global'))
      .join('\n')
      .trim()
    expect(readFileSync('docs/guide/relay.md', 'utf8')).toContain('```javascript\n' + recipe + '\n```')
  })
})
