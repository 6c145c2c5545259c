// @vitest-environment node
// One shopper's backlog against everyone else's: a relay forwarding in SPEC's format (16 requests
// in flight) to a service stand-in that takes 100 ms to answer each event, so that it carries
// 160 events a second. Shoppers post from addresses of their own (127.0.0.x, all of them this
// machine's loopback), over real HTTP, within the relay's default rate limit.
import { request } from 'node:http'
import { afterEach, expect, it } from 'vitest'
import { createRelay, forwardSink, toNodeHandler } from '../../src/relay'
import { startServiceStandIn } from '../support/service-stand-in'
import { sleep, waitFor } from '../support/wait'
import { envelope, serve } from './support'

const closing: (() => Promise<void>)[] = []
afterEach(async () => {
  await Promise.all(closing.splice(0).map((close) => close()))
})

async function relayBeforeSlowService() {
  const standIn = await startServiceStandIn({ keys: ['KEY'], answerAfterMs: 100 })
  const sink = forwardSink({ url: standIn.url, maxInFlight: 16 })
  const relay = await serve(toNodeHandler(createRelay({ keys: ['KEY'], sink, onError: () => {} })))
  closing.push(relay.close, standIn.close)
  return { standIn, sink, url: relay.origin + '/df/events' }
}

/** Posts a batch from the loopback address `from`: its status and how long its answer took. */
function post(url: string, from: string, events: unknown[]): Promise<{ status: number; ms: number }> {
  const started = performance.now()
  return new Promise((resolve, reject) => {
    const sent = request(url, { method: 'POST', localAddress: from, headers: { 'content-type': 'text/plain' } }, (response) => {
      response.resume()
      response.on('end', () => resolve({ status: response.statusCode!, ms: performance.now() - started }))
    })
    sent.on('error', reject)
    sent.end(JSON.stringify(events))
  })
}

/** `count` click-items whose item ids mark them, for the stand-in to be read by. */
const marked = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, index) => envelope({ properties: { rid: 's-1', item_id: prefix + '-' + index, variant_item_id: 'v' } }))

/** A burst of 2,000 events from `from`: 40 batches of 50 at once, within the rate limit's burst. */
const burst = (url: string, from: string) => Array.from({ length: 40 }, (_, batch) => post(url, from, marked(from + '-b' + batch, 50)))

it("a 2,000-event burst from one address leaves 20 other shoppers' single events answered 2xx within 2 s", async () => {
  const { standIn, sink, url } = await relayBeforeSlowService()
  const attack = Promise.all(burst(url, '127.0.0.2'))
  // The burst is in the sink, more than 12 s of the service's work, before the others come.
  await waitFor(() => sink.waiting() >= 900, 'the burst to reach the sink')
  const others = await Promise.all(Array.from({ length: 20 }, (_, shopper) => post(url, '127.0.0.' + (10 + shopper), marked('shopper-' + shopper, 1))))
  expect(others.map(({ status }) => status)).toEqual(Array(20).fill(200))
  expect(others.filter(({ ms }) => ms > 2000)).toEqual([])
  const stored = new Set(standIn.events.map((event) => event.properties.item_id))
  expect(Array.from({ length: 20 }, (_, shopper) => 'shopper-' + shopper + '-0').filter((marker) => !stored.has(marker))).toEqual([])
  // The one over its share was told to come back later.
  const attacked = await attack
  expect(attacked.filter(({ status }) => status == 503).length).toBeGreaterThan(0)
  expect(attacked.filter(({ status }) => status != 200 && status != 503)).toEqual([])
}, 30000)

it("five attacking addresses leave at least 95 % of 32 other shoppers' batches answered 2xx", async () => {
  const { standIn, url } = await relayBeforeSlowService()
  const attacks = Array.from({ length: 5 }, (_, attacker) => Promise.all(burst(url, '127.0.0.' + (2 + attacker))))
  await sleep(100)
  const others = await Promise.all(Array.from({ length: 32 }, (_, shopper) => post(url, '127.0.1.' + (10 + shopper), marked('shopper-' + shopper, 10))))
  const answered = others.filter(({ status }) => status == 200).length
  console.log(`${answered} of 32 other shoppers' batches answered 200, the slowest in ${Math.round(Math.max(...others.map(({ ms }) => ms)))} ms`)
  expect(answered / 32).toBeGreaterThanOrEqual(0.95)
  const stored = new Set(standIn.events.map((event) => event.properties.item_id))
  const storedOfOthers = others.flatMap((_, shopper) => marked('shopper-' + shopper, 10)).filter((event) => stored.has(event.properties.item_id))
  expect(storedOfOthers.length).toBeGreaterThanOrEqual(answered * 10)
  await Promise.all(attacks)
}, 40000)
