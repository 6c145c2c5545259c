// @vitest-environment node
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
// @ts-expect-error plain ES module without types
import { startDemo } from '../../demo/server.mjs'
import { createClient, createRecommendations } from '../../src/client'
import type { RecommendationState, RecommendationStore } from '../../src/client'
import type { Addon, EventName, Tracker } from '../../src/index'
import { quietConsole } from '../support/console'

// Against the demo server over real HTTP on 127.0.0.1.
let demo: { url: string; close: () => Promise<void> }
const user = { uid: 'uid-1', sid: 'sid-1' }
const realFetch = globalThis.fetch

beforeAll(async () => {
  demo = await startDemo({ port: 0, dataFile: join(mkdtempSync(join(tmpdir(), 'stores-')), 'events.ndjson') })
})
afterAll(() => demo.close())
beforeEach(() => {
  vi.restoreAllMocks()
})

const client = (options = {}) => createClient({ key: 'demo-key', baseUrl: demo.url, user, ...options })

/** The state once the store has an answer or an error. */
const settled = (store: RecommendationStore) =>
  new Promise<RecommendationState>((resolve) => {
    let stop = () => {}
    const check = () => {
      const state = store.getState()
      if (state.status == 'ready' || state.status == 'error') {
        stop()
        resolve(state)
      }
    }
    stop = store.subscribe(check)
    check()
  })

/** What the store asked the service: path and body of each request. */
const requests = (fetch: ReturnType<typeof vi.spyOn>) =>
  fetch.mock.calls.map(([url, init]: any) => ({ path: String(url).slice(demo.url.length), body: JSON.parse(init.body) }))

/** Records each answer's JSON as the service sent it, before the client reads it. */
function answers() {
  const seen: Promise<any>[] = []
  const fetch = vi.spyOn(globalThis, 'fetch').mockImplementation((url, init) =>
    realFetch(url, init).then((response) => {
      seen.push(response.clone().json())
      return response
    })
  )
  return { fetch, seen }
}

describe('recommendation stores', () => {
  it('start idle, and emit returns the store so calls chain', async () => {
    const store = createRecommendations(client())
    expect(store.getState()).toEqual({ status: 'idle', items: [] })
    expect(store.emit('setRequestBody', { payload: { log: true } }).emit({ name: 'newest', payload: { limit: 2 } })).toBe(store)
    expect(store.getState().status).toBe('loading')
    const state = await settled(store)
    expect(state.status).toBe('ready')
    expect(state.items).toHaveLength(2)
  })

  it.each([
    ['newest', { limit: 2 }, '/v3/recommend/items/newest', { limit: 2 }],
    ['trending', { offset: '1', limit: '2' }, '/v3/recommend/items/trending', { offset: 1, limit: 2 }],
    ['latest', undefined, '/v3/recommend/items/viewed/latest', {}],
    ['viewed', { item_id: '1001' }, '/v3/recommend/items/1001/viewed/viewed', {}],
    ['bought', { item_id: 1001, limit: 3 }, '/v3/recommend/items/1001/viewed/bought', { limit: 3 }],
    ['frequentlyPurchased', { item_ids: ['1001', 1002] }, '/v3/recommend/items/1001,1002/bought/bought', {}],
    ['predefined', { slot: 'home', item_id: '1001' }, '/v3/recommend/home', { item_id: '1001' }],
    ['featured', undefined, '/v3/recommend/items/featured', {}]
  ] as const)('%s asks %s and puts the answer into the state', async (name, payload, path, sent) => {
    const { fetch, seen } = answers()
    const store = createRecommendations(client()).emit(name, payload as never)
    const state = await settled(store)
    const [request] = requests(fetch)
    expect(request.path).toBe(path)
    // Exactly these fields: the one in the path is not repeated in the body.
    expect(request.body).toEqual({ user, t_client: expect.any(Number), ...sent })
    const answer = await seen[0]
    expect(state).toEqual({ status: 'ready', items: answer.items, meta: answer.meta, error: undefined, request: { name, payload: { ...(payload as object) } } })
    // SPEC's recommendation answer: meta with limit, offset, user_id, total, rid; product items.
    expect(Object.keys(state.meta!).sort()).toEqual(['limit', 'offset', 'rid', 'total', 'user_id'])
    expect(state.meta!.rid).toMatch(/^r-/)
    // This user has viewed nothing, so only latest answers an empty shelf.
    expect(state.items.length > 0).toBe(name != 'latest')
    for (const item of state.items)
      expect(item).toMatchObject({ id: expect.any(String), title: expect.any(String), price: expect.any(Array), variants_ids: expect.any(Array) })
  })

  it('asks the configured slots for trending and featured', async () => {
    const fetch = vi.spyOn(globalThis, 'fetch')
    const store = createRecommendations(client(), { trendingSlot: 'hot', featuredSlot: 'picks' })
    await settled(store.emit('trending'))
    await settled(store.emit('featured'))
    expect(requests(fetch).map((request) => request.path)).toEqual(['/v3/recommend/hot', '/v3/recommend/picks'])
  })

  it('request runs the last request again with its fields merged in, and slot asks a predefined slot', async () => {
    const fetch = vi.spyOn(globalThis, 'fetch')
    const store = createRecommendations(client())
    await settled(store.emit('viewed', { item_id: '1001', limit: 2 }))
    const next = await settled(store.emit('request', { offset: 2 }))
    await settled(store.emit('request', { slot: 'home' }))
    expect(requests(fetch).map(({ path, body }) => [path, body.offset, body.limit])).toEqual([
      ['/v3/recommend/items/1001/viewed/viewed', undefined, 2],
      ['/v3/recommend/items/1001/viewed/viewed', 2, 2],
      ['/v3/recommend/home', undefined, undefined]
    ])
    expect(next.request).toEqual({ name: 'viewed', payload: { item_id: '1001', limit: 2, offset: 2 } })
    expect(store.getState().request).toEqual({ name: 'predefined', payload: { slot: 'home' } })
  })

  it('setRequestBody merges into every later request under the same rules; payload fields win, null removes', async () => {
    const fetch = vi.spyOn(globalThis, 'fetch')
    const store = createRecommendations(client())
    store.emit('setRequestBody', { payload: { log: true, limit: '5', user: null } }).emit('setRequestBody', { payload: { offset: 1 } })
    await settled(store.emit('newest'))
    await settled(store.emit('viewed', { item_id: '1001', limit: 2 }))
    store.emit('setRequestBody', { payload: { log: null } })
    await settled(store.emit('latest'))
    expect(requests(fetch).map(({ body }) => [body.log, body.offset, body.limit, body.user])).toEqual([
      [true, 1, 5, user],
      [true, 1, 2, user],
      [undefined, 1, 5, user]
    ])
    quietConsole()
    expect(store.emit('setRequestBody', { payload: { limit: -1 } }).getState().error).toMatchObject({ event: 'setRequestBody', field: 'limit' })
  })

  it("sends the store's user, or the payload's, with a numeric ip as text", async () => {
    const fetch = vi.spyOn(globalThis, 'fetch')
    const store = createRecommendations(client(), { user: { uid: 'store-uid', sid: 's', ip: 2130706433 } })
    await settled(store.emit('newest'))
    await settled(store.emit('newest', { user: { uid: 'payload-uid', sid: 's', ip: '10.0.0.1' } }))
    await settled(store.emit('newest', { user: { uid: 'payload-uid', sid: 's', ip: 167772161 } }))
    expect(requests(fetch).map(({ body }) => body.user)).toEqual([
      { uid: 'store-uid', sid: 's', ip: '2130706433' },
      { uid: 'payload-uid', sid: 's', ip: '10.0.0.1' },
      { uid: 'payload-uid', sid: 's', ip: '167772161' }
    ])
  })

  it.each([
    ['viewed', {}, 'item_id', 'is required'],
    ['bought', { item_id: '' }, 'item_id', 'must be a non-empty string or an integer'],
    ['bought', { item_id: 1.5 }, 'item_id', 'must be a non-empty string or an integer'],
    ['frequentlyPurchased', { item_ids: [] }, 'item_ids', 'must be a non-empty array of strings or integers'],
    ['frequentlyPurchased', { item_ids: ['1001', {}] }, 'item_ids', 'must be a non-empty array of strings or integers'],
    ['predefined', { item_id: '1001' }, 'slot', 'is required'],
    ['newest', { offset: -1 }, 'offset', 'must be an integer 0-999999999 or its text'],
    ['trending', { limit: '2.5' }, 'limit', 'must be an integer 0-999999999 or its text'],
    ['latest', { limit: 1.5 }, 'limit', 'must be an integer 0-999999999 or its text'],
    ['latest', { limit: 1e30 }, 'limit', 'must be an integer 0-999999999 or its text'],
    ['newest', { user: 'me' }, 'user', 'must be an object'],
    ['featured', { offset: 1 }, 'offset', 'is not one of user, log'],
    ['viewed', 'x', 'payload', 'must be an object'],
    ['setRequestBody', {}, 'payload', 'must be an object'],
    ['setRequestBody', { payload: [1] }, 'payload', 'must be an object'],
    ['request', {}, 'slot', 'is required on a first request'],
    ['similar', {}, 'name', 'must be one of request, setRequestBody, newest, trending, latest, viewed, bought, frequentlyPurchased, predefined, featured']
  ] as const)('%s with %j is refused on %s, into the state and onError, sending nothing', (name, payload, field, rule) => {
    const fetch = vi.spyOn(globalThis, 'fetch')
    const console = vi.spyOn(globalThis.console, 'error').mockImplementation(() => {})
    const onError = vi.fn()
    const store = createRecommendations(client(), { onError })
    expect(store.emit(name as never, payload as never)).toBe(store)
    const { status, error } = store.getState()
    expect(status).toBe('error')
    expect(error).toMatchObject({ name: 'DiscoveryError', kind: 'invalid', event: name, field, message: `discovery-feedback: ${name}: ${field} ${rule}` })
    expect(onError).toHaveBeenCalledWith(error)
    expect(console).toHaveBeenCalledWith(error!.message)
    expect(fetch).not.toHaveBeenCalled()
  })

  it('never throws into the page: an unreadable payload, a throwing listener or onError', async () => {
    quietConsole()
    const store = createRecommendations(client(), {
      onError: () => {
        throw new Error('page bug')
      }
    })
    const seen: string[] = []
    store.subscribe(() => {
      throw new Error('listener bug')
    })
    store.subscribe(() => seen.push(store.getState().status))
    const hostile = Object.defineProperty({}, 'item_id', {
      enumerable: true,
      get() {
        throw new Error('getter')
      }
    })
    expect(() => store.emit('viewed', hostile as never)).not.toThrow()
    expect(store.getState().error).toMatchObject({ kind: 'invalid', event: 'viewed', field: 'payload' })
    await settled(store.emit('newest'))
    expect(seen).toEqual(['error', 'loading', 'ready'])
  })

  it('a newer emit supersedes the request in flight: its late answer never lands', async () => {
    // A page whose fetch wrapper drops the signal: the old request is not cancelled, and its
    // answer (the demo's slow slot answers after 3 s) arrives after the newer one.
    const signals: (AbortSignal | undefined)[] = []
    const bodies: Promise<string>[] = []
    vi.spyOn(globalThis, 'fetch').mockImplementation((url, init) => {
      signals.push(init!.signal as AbortSignal)
      const answer = realFetch(url, { ...init, signal: undefined })
      bodies.push(answer.then((response) => response.clone().text()))
      return answer
    })
    const store = createRecommendations(client())
    store.emit('predefined', { slot: 'slow' }).emit('newest', { limit: 1 })
    const newer = await settled(store)
    expect(newer.request!.name).toBe('newest')
    expect(signals[0]!.aborted).toBe(true)
    const changes = vi.fn()
    store.subscribe(changes)
    expect(JSON.parse((await Promise.all(bodies))[0]).meta.rid).toMatch(/^r-/) // the slow answer did come
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(store.getState()).toBe(newer)
    expect(changes).not.toHaveBeenCalled()
  })

  it('a refused event supersedes the request in flight too: the state shows the refusal', async () => {
    quietConsole()
    const store = createRecommendations(client())
    store.emit('newest').emit('viewed', {} as never)
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(store.getState()).toMatchObject({ status: 'error', error: { kind: 'invalid', field: 'item_id' } })
  })

  it('a body the request cannot hold, or an answer without items, never crashes the store', async () => {
    const store = createRecommendations(client())
    const cycle: Record<string, unknown> = {}
    cycle.self = cycle
    store.emit('setRequestBody', { payload: { cycle } })
    const refused = await settled(store.emit('newest'))
    expect(refused.error).toMatchObject({ kind: 'invalid', event: 'newest', field: 'payload' })
    // A service (or a client of the page's own) that answers null or items that are no array.
    for (const answer of [null, { items: { a: 1 } }]) {
      const odd = createRecommendations({ newest: () => Promise.resolve(answer) } as never)
      expect(await settled(odd.emit('newest'))).toMatchObject({ status: 'ready', items: [] })
    }
  })

  it('an aborted request leaves no error behind', async () => {
    const onError = vi.fn()
    const store = createRecommendations(client(), { onError })
    store.emit('predefined', { slot: 'slow' }).emit('viewed', { item_id: '1002' })
    const state = await settled(store)
    expect(state.status).toBe('ready')
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(onError).not.toHaveBeenCalled()
    expect(store.getState()).toBe(state)
  })

  it.each([
    ['api', () => client({ key: '' }), 401],
    ['http', () => client({ baseUrl: demo.url + '/elsewhere' }), 404],
    ['network', () => client({ baseUrl: 'http://127.0.0.1:9' }), undefined],
    ['timeout', () => client({ timeout: 100 }), undefined]
  ] as const)('a failure of kind %s lands in the state and onError', async (kind, make, status) => {
    const onError = vi.fn()
    const store = createRecommendations(make(), { onError })
    // The demo's slow slot answers after 3 s: past the timeout.
    const { error } = await settled(store.emit('predefined', { slot: kind == 'timeout' ? 'slow' : 'home' }))
    expect(error).toMatchObject({ name: 'DiscoveryError', kind, status })
    expect(onError).toHaveBeenLastCalledWith(error)
  })

  it('keeps the items on show while the next request loads', async () => {
    const store = createRecommendations(client())
    const first = await settled(store.emit('newest', { limit: 2 }))
    store.emit('request', { offset: 2 })
    expect(store.getState()).toMatchObject({ status: 'loading', items: first.items, meta: first.meta })
    expect((await settled(store)).items).not.toEqual(first.items)
  })

  it('subscribe returns its unsubscribe; getState is the same object until the state changes', async () => {
    const store = createRecommendations(client())
    const listener = vi.fn()
    const stop = store.subscribe(listener)
    expect(store.getState()).toBe(store.getState())
    await settled(store.emit('newest'))
    expect(listener).toHaveBeenCalledTimes(2) // loading, ready
    stop()
    await settled(store.emit('latest'))
    expect(listener).toHaveBeenCalledTimes(2)
  })
})

describe("shelf clicks carry the shelf's rid", () => {
  it('a click on a tile of either shelf carries the rid of the answer that filled that shelf', async () => {
    const calls: unknown[] = []
    // A tracker that records what it was asked to track, after its add-ons had their say.
    const addons: Addon[] = []
    const track = (event: EventName, properties: unknown) => {
      for (const addon of addons) properties = addon.event?.(event, properties) ?? properties
      calls.push(properties)
    }
    const tracker = {
      user,
      clickItem: (properties: unknown) => track('click-item', properties),
      addToCart: (properties: unknown) => track('add-to-cart', properties),
      clickSuggestion: () => {},
      redirect: () => {},
      track: () => {},
      use: (addon: Addon) => addons.push(addon)
    } as unknown as Tracker
    const linked = createClient({ key: 'demo-key', baseUrl: demo.url, tracker })
    const viewed = await settled(createRecommendations(linked).emit('viewed', { item_id: '1001' }))
    const bought = await settled(createRecommendations(linked).emit('bought', { item_id: '1001' }))
    const onlyViewed = viewed.items.find((item) => !bought.items.some((other) => other.id == item.id))!
    const onlyBought = bought.items.find((item) => !viewed.items.some((other) => other.id == item.id))!
    tracker.clickItem({ item_id: onlyViewed.id, variant_item_id: onlyViewed.variants_ids[0] })
    tracker.addToCart({ item_id: onlyBought.id, variant_item_id: onlyBought.variants_ids[0], quantity: 1 } as never)
    expect(calls).toEqual([
      { item_id: onlyViewed.id, variant_item_id: onlyViewed.variants_ids[0], rid: viewed.meta!.rid },
      { item_id: onlyBought.id, variant_item_id: onlyBought.variants_ids[0], quantity: 1, rid: bought.meta!.rid }
    ])
    expect(viewed.meta!.rid).not.toBe(bought.meta!.rid)
  })
})
