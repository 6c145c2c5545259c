// @vitest-environment node
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRelay, toNodeHandler, type BatchReport } from '../../src/relay'
import { launch, startDemoCollector, watch } from '../support/harness'
import { waitFor } from '../support/wait'
import { recordingSink, serve } from './support'

// The service's own feedback library, @findify/analytics as published on npm (MIT, Findify;
// source in the findify/findify-js repository), loaded unmodified by a script tag from its
// browser build (its global FindifyAnalytics is the init function), sends each of SPEC's seven events as a shop's widgets call it: by sendBeacon,
// and by an image request where the browser has no sendBeacon (the library picks its transport
// when it loads). Each must be stored once through the reference collector and through the
// relay, with `item_id` as the variant the library leaves out.

const LIBRARY = readFileSync(createRequire(import.meta.url).resolve('@findify/analytics/dist/findify-analytics.min.js'))

// The calls a shop's widgets make, one per event; view-page's url, ref, width and height the library fills in.
const CALLS: [string, Record<string, unknown>][] = [
  ['view-page', {}],
  ['click-suggestion', { rid: 'a-1', suggestion: 'red shoes' }],
  ['redirect', { rid: 'a-2', suggestion: 'sale' }],
  ['click-item', { rid: 's-1', item_id: '42' }],
  ['add-to-cart', { rid: 's-1', item_id: '42', quantity: 2 }],
  ['update-cart', { line_items: [{ item_id: '42', unit_price: 49.95, quantity: 2 }] }],
  ['purchase', { order_id: '1001', currency: 'EUR', revenue: 99.9, line_items: [{ item_id: '42', unit_price: 49.95, quantity: 2 }] }]
]

const page = (withoutBeacon: boolean) =>
  '<!doctype html><meta charset="utf-8">' +
  // The library chooses sendBeacon or the image as it loads: a browser without sendBeacon is one where it is gone by then.
  (withoutBeacon ? '<script>delete Navigator.prototype.sendBeacon</script>' : '') +
  '<script src="/findify-analytics.min.js"></script>'

// The page the library's view-page fills in as its url.
const PAGE_URL = expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/(beacon|image)$/)

let browser: Browser
let site: Awaited<ReturnType<typeof serve>>

beforeAll(async () => {
  site = await serve((request, response) => {
    const path = new URL(request.url!, 'http://x').pathname
    if (path == '/findify-analytics.min.js') return response.writeHead(200, { 'content-type': 'text/javascript' }).end(LIBRARY)
    if (path == '/favicon.ico') return response.writeHead(204).end()
    if (path == '/beacon' || path == '/image') return response.writeHead(200, { 'content-type': 'text/html' }).end(page(path == '/image'))
    response.writeHead(404).end()
  })
  browser = await launch()
})
afterAll(async () => {
  await browser?.close()
  await site?.close()
})

/** Sends the seven events with the library on a page of `transport`, to `endpoint`, and leaves. */
async function sendAll(transport: 'beacon' | 'image', endpoint: string) {
  const context = await browser.newContext()
  const tab = await context.newPage()
  const faults = watch(tab)
  await tab.goto(site.origin + '/' + transport)
  const used = await tab.evaluate(
    async ({ calls, endpoint }) => {
      const analytics = (window as any).FindifyAnalytics({ key: 'KEY' })
      for (const [event, properties] of calls) await analytics.sendEvent(event, properties, false, endpoint)
      return typeof navigator.sendBeacon == 'function' ? 'beacon' : 'image'
    },
    { calls: CALLS, endpoint }
  )
  expect(used).toBe(transport)
  return { context, faults }
}

const expectSeven = (stored: { event: string; key: string; properties: any; user: any }[], pageUrl: unknown = PAGE_URL) => {
  expect(stored.map((event) => event.event).sort()).toEqual(CALLS.map(([event]) => event).sort())
  for (const event of stored) {
    expect(event.key).toBe('KEY')
    expect(event.user.uid).toMatch(/^\w{16}$/)
  }
  const byName = Object.fromEntries(stored.map((event) => [event.event, event.properties]))
  expect(byName['click-item']).toEqual({ rid: 's-1', item_id: '42', variant_item_id: '42' })
  expect(byName['add-to-cart']).toEqual({ rid: 's-1', item_id: '42', variant_item_id: '42', quantity: 2 })
  expect(byName.purchase).toEqual({
    order_id: '1001',
    currency: 'EUR',
    revenue: 99.9,
    line_items: [{ item_id: '42', variant_item_id: '42', unit_price: 49.95, quantity: 2 }]
  })
  expect(byName['view-page']).toMatchObject({ url: pageUrl, ref: '', width: expect.any(Number) })
}

describe.each(['beacon', 'image'] as const)('@findify/analytics by %s', (transport) => {
  it('each of the seven events stored once by the reference collector', async () => {
    const collector = await startDemoCollector()
    try {
      const { context, faults } = await sendAll(transport, collector.url)
      await waitFor(() => collector.stored().length >= CALLS.length, 'seven events stored')
      await context.close()
      expectSeven(collector.stored() as any)
      expect(collector.stored()).toHaveLength(CALLS.length)
      expect(faults).toEqual({ pageErrors: [], consoleErrors: [] })
    } finally {
      await collector.close()
    }
  })

  it('each of the seven events handed to the relay’s sink once, with the variants it filled counted', async () => {
    const recorded = recordingSink()
    const reports: BatchReport[] = []
    const relay = createRelay({ keys: ['KEY'], sink: recorded.sink, onBatch: (report) => reports.push(report), bots: 'keep' })
    const server = await serve(toNodeHandler(relay))
    try {
      const { context } = await sendAll(transport, server.origin + '/v3/feedback')
      await waitFor(() => recorded.events().length >= CALLS.length, 'seven events relayed')
      await context.close()
      expectSeven(recorded.events())
      expect(recorded.events()).toHaveLength(CALLS.length)
      expect(reports.reduce((sum, report) => sum + report.variantsFilled, 0)).toBe(4)
      expect(reports.flatMap((report) => report.rejected)).toEqual([])
    } finally {
      await server.close()
    }
  })
})

/*
 * The service's SDK, @findify/sdk 2.5.2 (MIT, Findify; findify/findify-js), sends feedback as a
 * shop's server or app would call it: `send({ type: 'feedback', params })`, which posts the
 * properties at the top level of the body with `X-Key`. Its module build (lib/) is bundled for
 * Node as a shop's bundler would, its code as published; axios then posts over real HTTP.
 */
async function loadSdk(): Promise<{ init: (config: Record<string, unknown>) => { send: (request: unknown) => Promise<unknown> } }> {
  const { build } = await import('esbuild')
  const entry = createRequire(import.meta.url).resolve('@findify/sdk')
  const { outputFiles } = await build({ entryPoints: [entry], bundle: true, format: 'cjs', platform: 'node', write: false, logLevel: 'silent' })
  const module = { exports: {} as any }
  new Function('module', 'exports', 'require', outputFiles[0].text)(module, module.exports, createRequire(import.meta.url))
  return module.exports
}

describe("@findify/sdk's feedback requests", () => {
  const sendAllBySdk = async (base: string) => {
    const sdk = await loadSdk()
    const client = sdk.init({ key: 'KEY', url: base + '/v3', method: 'post', user: { uid: 'Ab3dE5gH7jK9mN1p', sid: 'Qr2sT4uV6wX8yZ0a' } })
    for (const [event, properties] of CALLS) {
      const filled = event == 'view-page' ? { url: 'https://shop.test/', ref: '', width: 1280, height: 800 } : properties
      await client.send({ type: 'feedback', params: { event, ...filled } })
    }
  }

  it('each of the seven stored once by the reference collector', async () => {
    const collector = await startDemoCollector()
    try {
      await sendAllBySdk(collector.url.replace('/v3/feedback', ''))
      expectSeven(collector.stored() as any, 'https://shop.test/')
      expect(collector.stored()).toHaveLength(CALLS.length)
    } finally {
      await collector.close()
    }
  })

  it('each of the seven handed to the relay’s sink once', async () => {
    const recorded = recordingSink()
    const relay = createRelay({ keys: ['KEY'], sink: recorded.sink, bots: 'keep' })
    const server = await serve(toNodeHandler(relay))
    try {
      await sendAllBySdk(server.origin)
      expectSeven(recorded.events(), 'https://shop.test/')
      expect(recorded.events()).toHaveLength(CALLS.length)
    } finally {
      await server.close()
    }
  })
})
