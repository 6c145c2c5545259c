// @vitest-environment node
// A relay that cannot tell one client from another, over real HTTP: the guide's Hono recipe run as
// Bun or Deno run it (app.fetch(request), with no Node request for the peer address), and a relay
// whose ipHeader a shopper fills with junk. Either way its rate limit must still hold: 6,000
// events from many shoppers, in bursts of 500-event requests, meet 429 with Retry-After once the
// shared bucket is spent, and the shop is told once why.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { Readable } from 'node:stream'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { createRelay, toNodeHandler } from '../../src/relay'
import { bodyOf, envelope, recordingSink, serve } from './support'

const KEY = 'SHOP-KEY'
const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0'
const WARNING = /^discovery-feedback: relay: a request showed no client address \(relay\.fetch was given no remoteAddress, or the ipHeader held no address\)/

const servers: { close(): Promise<void> }[] = []
afterAll(async () => {
  for (const server of servers) await server.close()
})

/** 12 requests of 500 events, each a shopper of its own, in bursts of 4 at once: their statuses and Retry-After headers. */
async function burstsOf6000(url: string, headers: Record<string, string> = {}) {
  const answers: { status: number; retryAfter: string | null }[] = []
  for (let burst = 0; burst < 3; burst++) {
    const requests = Array.from({ length: 4 }, async (_, index) => {
      const shopper = { uid: `shopper-${burst}-${index}`, sid: 's' }
      const events = Array.from({ length: 500 }, () => envelope({ key: KEY, user: shopper }))
      const response = await fetch(url + '?t_sent=' + Date.now(), {
        method: 'POST',
        headers: { 'content-type': 'text/plain;charset=UTF-8', 'user-agent': BROWSER, ...headers },
        body: JSON.stringify(events)
      })
      await response.text()
      return { status: response.status, retryAfter: response.headers.get('retry-after') }
    })
    answers.push(...(await Promise.all(requests)))
  }
  return answers
}

/**
 * What a relay with the default rate limit must answer the 6,000 events: 2,000 at once, the rest
 * told to wait. The bucket holds 2,000 events and gets 10 a second back, so the first 4 requests
 * of 500 are let in (and answered 200, or 503 where forwarding them one request each outlasts the
 * sink's timeout on a loaded machine), perhaps a fifth after the refill; the others are 429.
 */
function expectLimited(answers: { status: number; retryAfter: string | null }[]) {
  const refused = answers.filter((answer) => answer.status == 429)
  expect(answers.filter((answer) => answer.status == 200).length).toBeLessThanOrEqual(5)
  expect(refused.length).toBeGreaterThanOrEqual(7)
  for (const answer of refused) expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1)
}

describe("the guide's Hono recipe as Bun and Deno run it, given no peer address", () => {
  const forwarded: unknown[] = []
  let origin: string
  beforeAll(async () => {
    const service = await serve(async (request: IncomingMessage, response: ServerResponse) => {
      forwarded.push(JSON.parse(await bodyOf(request)))
      response.writeHead(200).end()
    })
    servers.push(service)
    process.env.DF_KEY = KEY
    process.env.DF_SERVICE_URL = service.origin + '/v3/events'
    const { default: app } = await import('./recipes/hono.mjs')
    // Bun.serve({ fetch: app.fetch }) and Deno.serve(app.fetch) hand the app a Request and no Node request.
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
      const response: Response = await app.fetch(request)
      outgoing.writeHead(response.status, Object.fromEntries(response.headers)).end(Buffer.from(await response.arrayBuffer()))
    })
    servers.push(started)
    origin = started.origin
  })
  afterEach(() => {
    vi.restoreAllMocks()
  })

  it('answers 6,000 events in bursts 429 with Retry-After once 2,000 are taken, and warns once on the console', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    expectLimited(await burstsOf6000(origin + '/df/events'))
    expect(forwarded.length).toBeLessThanOrEqual(2500)
    const warnings = warn.mock.calls.map((call) => String(call[0])).filter((text) => text.startsWith('RelayWarning: '))
    expect(warnings).toHaveLength(1)
    expect(warnings[0].slice('RelayWarning: '.length)).toMatch(WARNING)
  }, 30000)
})

describe('a relay whose ipHeader holds junk', () => {
  it('answers 6,000 events in bursts 429 with Retry-After once 2,000 are taken, and tells onError once', async () => {
    const recorded = recordingSink()
    const errors: Error[] = []
    const relay = createRelay({ keys: [KEY], sink: recorded.sink, ipHeader: 'x-real-ip', onError: (error) => errors.push(error) })
    const server = await serve(toNodeHandler(relay))
    servers.push(server)
    expectLimited(await burstsOf6000(server.origin + '/df/events', { 'x-real-ip': 'not-an-address' }))
    expect(recorded.events().length).toBeLessThanOrEqual(2500)
    expect(errors.map((error) => error.name)).toEqual(['RelayWarning'])
    expect(errors[0].message).toMatch(WARNING)
  }, 30000)
})
