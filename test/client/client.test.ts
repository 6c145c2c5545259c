// @vitest-environment node
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
// @ts-expect-error plain ES module without types
import { startDemo } from '../../demo/server.mjs'
import { createClient } from '../../src/client'
import { ridFor } from '../../src/shared/rids'
import type { DiscoveryError } from '../../src/client'
import type { Addon, EventName, Tracker } from '../../src/index'

// Against the demo server over real HTTP on 127.0.0.1.
let demo: { url: string; close: () => Promise<void> }
const user = { uid: 'uid-1', sid: 'sid-1' }
const RID = /^[a-z]-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

beforeAll(async () => {
  demo = await startDemo({ port: 0, dataFile: join(mkdtempSync(join(tmpdir(), 'client-')), 'events.ndjson') })
})
afterAll(() => demo.close())
beforeEach(() => {
  vi.restoreAllMocks()
  // rids are remembered in sessionStorage; Node has none, so memory only.
})

const client = (options = {}) => createClient({ key: 'demo-key', baseUrl: demo.url, user, ...options })
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected a failure')
    },
    (error: DiscoveryError) => error
  )

describe('discovery client', () => {
  it('sends user, t_client and X-Key as POST JSON, and types the autocomplete answer', async () => {
    const fetch = vi.spyOn(globalThis, 'fetch')
    const answer = await client().autocomplete({ q: 'shirt', item_limit: 2 })
    const [url, init] = fetch.mock.calls[0] as [string, RequestInit]
    expect(url).toBe(demo.url + '/v3/autocomplete')
    expect(init.method).toBe('POST')
    expect(init.headers).toMatchObject({ 'content-type': 'application/json', 'x-key': 'demo-key' })
    const body = JSON.parse(init.body as string)
    expect(body).toMatchObject({ user, q: 'shirt', item_limit: 2 })
    expect(typeof body.t_client).toBe('number')
    expect(answer.meta.rid).toMatch(RID)
    expect(answer.meta.rid[0]).toBe('a')
    expect(answer.suggestions.map((suggestion) => suggestion.value)).toEqual(['linen shirt', 'polo shirt'])
    expect(answer.items.map((item) => item.id)).toEqual(['1008', '1021'])
  })

  it.each([
    ['searchContent', (c: any) => c.searchContent({ q: 'boot' }), 's'],
    ['smartCollection', (c: any) => c.smartCollection('sale', { limit: 3 }), 'c'],
    ['recommend', (c: any) => c.recommend('home', { item_id: '1001' }), 'r'],
    ['newest', (c: any) => c.newest({ limit: 2 }), 'r'],
    ['trending', (c: any) => c.trending({ limit: 2 }), 'r'],
    ['featured', (c: any) => c.featured(), 'r'],
    ['latestViewed', (c: any) => c.latestViewed(), 'r'],
    ['viewedViewed', (c: any) => c.viewedViewed('1001'), 'r'],
    ['viewedBought', (c: any) => c.viewedBought('1001'), 'r'],
    ['boughtBought', (c: any) => c.boughtBought(['1001', '1002']), 'r']
  ])('%s answers with items and a rid of its family', async (_, call, prefix) => {
    const answer = await call(client())
    expect(answer.meta.rid).toMatch(RID)
    expect(answer.meta.rid[0]).toBe(prefix)
    expect(Array.isArray(answer.items)).toBe(true)
  })

  it("asks trending and featured at the routes the service's own SDK asks", async () => {
    const fetch = vi.spyOn(globalThis, 'fetch')
    const [trending, featured] = await Promise.all([client().trending({ limit: 3 }), client().featured()])
    expect(fetch.mock.calls.map(([url]) => String(url).slice(demo.url.length))).toEqual(['/v3/recommend/items/trending', '/v3/recommend/items/featured'])
    expect(trending.items).toHaveLength(3)
    expect(trending.meta.user_id).toBe(user.uid)
    expect(trending.items.map((item) => item.id)).not.toEqual(featured.items.map((item) => item.id))
  })

  it('sends t_client as a string on content search, as SPEC declares it there', async () => {
    const fetch = vi.spyOn(globalThis, 'fetch')
    await client().searchContent({ q: 'boot' })
    expect(typeof JSON.parse((fetch.mock.calls[0][1] as RequestInit).body as string).t_client).toBe('string')
  })

  it("rejects a missing key with SPEC's error as kind api", async () => {
    const error = await failure(client({ key: '' }).autocomplete({ q: 'x' }))
    expect(error).toMatchObject({ name: 'DiscoveryError', kind: 'api', status: 401, route: '/v3/autocomplete' })
    expect(error.message).toBe('discovery-feedback: /v3/autocomplete: An API key must be provided. (HTTP 401)')
  })

  it('rejects a 500 with its status', async () => {
    const error = await failure(client().recommend('broken'))
    expect(error).toMatchObject({ kind: 'api', status: 500, route: '/v3/recommend/broken' })
  })

  it('rejects with kind timeout when the service is too slow, without cancelling other requests', async () => {
    const slow = client({ timeout: 300 })
    const [timedOut, fine] = await Promise.all([failure(slow.recommend('slow')), slow.newest()])
    expect(timedOut).toMatchObject({ kind: 'timeout', route: '/v3/recommend/slow' })
    expect(fine.meta.rid).toMatch(RID)
  })

  it('rejects with kind network when nothing answers', async () => {
    const error = await failure(createClient({ key: 'k', baseUrl: 'http://127.0.0.1:9', user }).newest())
    expect(error).toMatchObject({ kind: 'network', route: '/v3/recommend/items/newest' })
  })

  it('lets a caller cancel one request with its own signal', async () => {
    const controller = new AbortController()
    const pending = failure(client().recommend('slow', {}, { signal: controller.signal }))
    controller.abort()
    expect(await pending).toMatchObject({ kind: 'network', message: expect.stringContaining('cancelled') })
  })

  it('remembers which response showed which item and suggestion', async () => {
    const answer = await client().autocomplete({ q: 'boot' })
    expect(ridFor('item_id', answer.items[0].id)).toBe(answer.meta.rid)
    expect(ridFor('suggestion', answer.suggestions[0].value)).toBe(answer.meta.rid)
    const later = await client().autocomplete({ q: 'leather' })
    expect(ridFor('item_id', '1004')).toBe(later.meta.rid) // most recent first
  })
})

describe('rid linkage through a tracker', () => {
  /** A tracker that records what it was asked to track, after its add-ons had their say, as the real one does. */
  const fakeTracker = () => {
    const calls: [string, unknown][] = []
    const addons: Addon[] = []
    const track = (event: string, properties: unknown) => {
      for (const addon of addons) properties = addon.event?.(event as EventName, properties) ?? properties
      calls.push([event, properties])
    }
    const use = vi.fn((addon: Addon) => {
      addons.push(addon)
      return () => addons.splice(addons.indexOf(addon), 1)
    })
    const tracker = {
      user,
      clickItem: (properties: unknown) => track('click-item', properties),
      clickSuggestion: (properties: unknown) => track('click-suggestion', properties),
      addToCart: (properties: unknown) => track('add-to-cart', properties),
      redirect: (properties: unknown) => track('redirect', properties),
      track,
      use
    } as unknown as Tracker
    return { tracker, calls, use }
  }

  it('fills in the rid of the response that showed the item or suggestion; an explicit rid wins', async () => {
    const { tracker, calls, use } = fakeTracker()
    const linked = createClient({ key: 'demo-key', baseUrl: demo.url, tracker })
    const answer = await linked.autocomplete({ q: 'trail' })
    const rid = answer.meta.rid
    tracker.clickItem({ item_id: '1001', variant_item_id: '1001-38' })
    tracker.clickSuggestion({ suggestion: 'trail runner' })
    tracker.addToCart({ item_id: '1001', variant_item_id: '1001-38', quantity: 1 } as never)
    tracker.track('click-item', { item_id: '1001', variant_item_id: '1001-38' })
    tracker.clickItem({ rid: 'mine', item_id: '1001', variant_item_id: '1001-38' })
    tracker.clickItem({ item_id: 'never-shown', variant_item_id: 'x' })
    expect(calls).toEqual([
      ['click-item', { item_id: '1001', variant_item_id: '1001-38', rid }],
      ['click-suggestion', { suggestion: 'trail runner', rid }],
      ['add-to-cart', { item_id: '1001', variant_item_id: '1001-38', quantity: 1, rid }],
      ['click-item', { item_id: '1001', variant_item_id: '1001-38', rid }],
      ['click-item', { rid: 'mine', item_id: '1001', variant_item_id: '1001-38' }],
      ['click-item', { item_id: 'never-shown', variant_item_id: 'x' }]
    ])
    // client.tracker is that same tracker, linked (its types let the rid out).
    expect(linked.tracker).toBe(tracker)
    expect(createClient({ key: 'demo-key', baseUrl: demo.url }).tracker).toBeUndefined()
    // Linking twice does not wrap twice: one add-on per tracker.
    createClient({ key: 'demo-key', baseUrl: demo.url, tracker })
    tracker.clickItem({ item_id: '1001', variant_item_id: '1001-38' })
    expect(calls.at(-1)).toEqual(['click-item', { item_id: '1001', variant_item_id: '1001-38', rid }])
    expect(use).toHaveBeenCalledTimes(1)
  })

  it("fills the rid into a copy: the page's own object stays as it was", async () => {
    const { tracker, calls } = fakeTracker()
    const { meta } = await createClient({ key: 'demo-key', baseUrl: demo.url, tracker }).autocomplete({ q: 'trail' })
    const properties = Object.freeze({ item_id: '1001', variant_item_id: '1001-38' })
    tracker.clickItem(properties)
    expect(properties).toEqual({ item_id: '1001', variant_item_id: '1001-38' })
    expect(calls).toEqual([['click-item', { item_id: '1001', variant_item_id: '1001-38', rid: meta.rid }]])
  })

  it('links a tracker given as a function once it has loaded, with one add-on', async () => {
    const { tracker, calls, use } = fakeTracker()
    const page: { tracker?: Tracker } = {}
    const client = createClient({ key: 'demo-key', baseUrl: demo.url, user, tracker: () => page.tracker })
    const { meta } = await client.autocomplete({ q: 'trail' })
    page.tracker = tracker
    await client.newest()
    expect(client.tracker).toBe(tracker)
    tracker.clickSuggestion({ suggestion: 'trail runner' })
    expect(calls).toEqual([['click-suggestion', { suggestion: 'trail runner', rid: meta.rid }]])
    expect(use).toHaveBeenCalledTimes(1)
  })

  it('a request made before a tracker given as a function has loaded waits for its user', async () => {
    const { tracker } = fakeTracker()
    // Where a script tag's tracker appears once it has loaded.
    const page: { tracker?: Tracker } = {}
    const fetch = vi.spyOn(globalThis, 'fetch')
    const early = createClient({ key: 'demo-key', baseUrl: demo.url, tracker: () => page.tracker }).newest({ limit: 1 })
    await new Promise((resolve) => setTimeout(resolve, 150))
    // Nothing went while there was no user to send.
    expect(fetch).not.toHaveBeenCalled()
    page.tracker = tracker
    const answer = await early
    expect(JSON.parse((fetch.mock.calls[0][1] as RequestInit).body as string).user).toEqual(user)
    expect(answer.meta.user_id).toBe(user.uid)
  })

  it('without a user by the end of its timeout, a request goes as it is, and the service refuses it by name', async () => {
    const waited = failure(createClient({ key: 'demo-key', baseUrl: demo.url, tracker: () => undefined, timeout: 200 }).newest())
    const userless = failure(createClient({ key: 'demo-key', baseUrl: demo.url }).newest())
    for (const error of await Promise.all([waited, userless])) {
      expect(error).toMatchObject({ kind: 'api', status: 400, route: '/v3/recommend/items/newest' })
      expect(error.message).toBe('discovery-feedback: /v3/recommend/items/newest: user is required (HTTP 400)')
    }
  })

  it('a request cancelled while it waits for its user settles at once, as cancelled', async () => {
    const controller = new AbortController()
    const started = Date.now()
    const pending = failure(createClient({ key: 'demo-key', baseUrl: demo.url, tracker: () => undefined }).newest({}, { signal: controller.signal }))
    setTimeout(() => controller.abort(), 100)
    expect(await pending).toMatchObject({ kind: 'network', message: expect.stringContaining('cancelled') })
    // Well before the 5 s the wait for a user may last.
    expect(Date.now() - started).toBeLessThan(1000)
  })

  it('takes the user of the tracker for every request', async () => {
    const { tracker } = fakeTracker()
    const fetch = vi.spyOn(globalThis, 'fetch')
    await createClient({ key: 'demo-key', baseUrl: demo.url, tracker }).newest()
    expect(JSON.parse((fetch.mock.calls[0][1] as RequestInit).body as string).user).toEqual(user)
  })
})
