// @vitest-environment node
import { mkdtempSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { build } from 'esbuild'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
// @ts-expect-error plain ES module without types
import { startDemo } from '../../demo/server.mjs'
import { launch, startPages, watch } from '../support/harness'

/*
 * The service's own JavaScript SDK, @findify/sdk 2.5.2 as npm has it, asks the demo's discovery
 * routes from a shop page in Chromium, over real HTTP, by POST and by JSONP. Its published browser
 * build (dist/findify-sdk.js) cannot send at all in 2.5.2 (its Client never keeps its config), so
 * the page gets the package's module build (lib/), bundled for the browser as a shop's bundler
 * would: its code runs as published. The page and the demo are two origins, as a shop and the
 * service are.
 */

const SDK_ENTRY = createRequire(import.meta.url).resolve('@findify/sdk')

let browser: Browser
let demo: { url: string; close: () => Promise<void> }
let pages: Awaited<ReturnType<typeof startPages>>

/** The SDK's lib/, bundled into one classic script that sets `window.FindifySDK` (its `init`). */
async function bundleSdk() {
  const { outputFiles } = await build({ entryPoints: [SDK_ENTRY], bundle: true, format: 'iife', globalName: 'FindifySDK', platform: 'browser', write: false })
  return outputFiles[0].text
}

beforeAll(async () => {
  let sdk: string
  ;[browser, demo, pages, sdk] = await Promise.all([
    launch(),
    startDemo({ port: 0, dataFile: join(mkdtempSync(join(tmpdir(), 'findify-sdk-')), 'events.ndjson') }),
    startPages(),
    bundleSdk()
  ])
  // A `</script>` inside the bundle would end the element early.
  expect(sdk).not.toContain('</script')
  pages.page('/shop', `<title>Shop</title><script>${sdk}</script><script src="/discovery-feedback-client.min.js"></script>`)
})
afterAll(async () => {
  await browser?.close()
  await demo?.close()
  await pages?.close()
})

/** Posts one product view for `uid` to the demo's collector: the recently-viewed route of that uid shows the product. */
async function viewed(uid: string, itemId: string) {
  const envelope = {
    event: 'view-page',
    properties: { url: 'http://shop.example/product/' + itemId, ref: '', width: 1280, height: 800, item_id: itemId, variant_item_id: itemId },
    key: 'demo-key',
    t_client: Date.now(),
    user: { uid, sid: 'sid-' + uid },
    event_id: 'view-' + uid
  }
  const response = await fetch(demo.url + '/v3/feedback', { method: 'POST', body: JSON.stringify([envelope]) })
  expect(response.status).toBe(200)
}

/** The SDK's requests, in the form `client.send` takes them, and the route each must reach. */
const SORTED = [{ field: 'price', order: 'desc' }]
const REQUESTS: [label: string, request: { type: string; params: Record<string, unknown> }, route: string][] = [
  ['autocomplete', { type: 'autocomplete', params: { q: 'shirt', item_limit: 2 } }, '/v3/autocomplete'],
  ['content search', { type: 'content', params: { q: 'boot', limit: 2 } }, '/v3/search/content'],
  ['smart collection', { type: 'smart-collection', params: { slot: 'all' } }, '/v3/smart-collection/all'],
  ['smart collection, sorted', { type: 'smart-collection', params: { slot: 'all', sort: SORTED } }, '/v3/smart-collection/all'],
  ['slot', { type: 'recommendations', params: { type: 'slot', slot: 'home', item_ids: ['1001'] } }, '/v3/recommend/home'],
  ['newest', { type: 'recommendations', params: { type: 'newest', limit: 2 } }, '/v3/recommend/items/newest'],
  ['latest', { type: 'recommendations', params: { type: 'latest' } }, '/v3/recommend/items/viewed/latest'],
  ['viewed/viewed', { type: 'recommendations', params: { type: 'viewed', item_id: '1001' } }, '/v3/recommend/items/1001/viewed/viewed'],
  ['viewed/bought', { type: 'recommendations', params: { type: 'bought', item_id: '1001' } }, '/v3/recommend/items/1001/viewed/bought'],
  [
    'bought/bought',
    { type: 'recommendations', params: { type: 'purchasedTogether', item_ids: ['1001', '1002'] } },
    '/v3/recommend/items/1001,1002/bought/bought'
  ],
  ['trending', { type: 'recommendations', params: { type: 'trending', limit: 3 } }, '/v3/recommend/items/trending'],
  ['featured', { type: 'recommendations', params: { type: 'featured' } }, '/v3/recommend/items/featured']
]

/** What the demo saw of each discovery request the page made: method, path and query or body. */
function recordDiscovery(page: Page) {
  const seen: { method: string; path: string; query: string; body: unknown }[] = []
  page.on('request', (request) => {
    const url = new URL(request.url())
    if (url.origin != demo.url || !url.pathname.startsWith('/v3/') || request.method() == 'OPTIONS') return
    seen.push({ method: request.method(), path: url.pathname, query: url.search, body: request.postDataJSON() })
  })
  return seen
}

/** Sends every request through one SDK client, one after the other (the SDK drops the answer of a JSONP request a newer one overtook). */
const askAll = (page: Page, method: 'post' | 'jsonp', user: { uid: string; sid: string }) =>
  page.evaluate(
    async ({ url, method, user, requests }) => {
      const sdk = (window as any).FindifySDK.init({ key: 'demo-key', url, user, method, retryCount: 0 })
      const answers = []
      for (const request of requests) answers.push(await sdk.send(request).catch((error: unknown) => ({ failed: String(error) })))
      return answers
    },
    { url: demo.url + '/v3', method, user, requests: REQUESTS.map(([, request]) => request) }
  )

describe('@findify/sdk 2.5.2, unmodified, against the demo in Chromium', () => {
  it.each(['post', 'jsonp'] as const)('by %s, every route answers, and the demo reads the user and the sort the SDK sent', async (method) => {
    const user = { uid: 'sdk-' + method, sid: 'sid-' + method }
    // Each uid viewed another product: the recently-viewed answer tells whose user the demo read.
    const item = method == 'post' ? '1005' : '1006'
    await viewed(user.uid, item)
    const page = await browser.newPage()
    const errors = watch(page)
    const seen = recordDiscovery(page)
    await page.goto(pages.origin + '/shop')
    const answers: any[] = await askAll(page, method, user)
    const byLabel = Object.fromEntries(REQUESTS.map(([label], index) => [label, answers[index]]))

    // Every route answered SPEC's shape, with the rid of its family: none failed, none was a 404.
    expect(answers.map((answer) => answer?.meta?.rid?.[0] ?? answer)).toEqual(['a', 's', 'c', 'c', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'])
    expect(seen.map((request) => request.path)).toEqual(REQUESTS.map(([, , route]) => route))
    // The transport the SDK chose: GET with the fields in qs brackets, or POST with JSON.
    for (const request of seen) {
      if (method == 'jsonp') {
        expect(request.method).toBe('GET')
        expect(request.query).toContain('user%5Buid%5D=' + user.uid + '&user%5Bsid%5D=' + user.sid)
        expect(request.query).toMatch(/&callback=__jp/)
      } else {
        expect(request.method).toBe('POST')
        expect(request.body).toMatchObject({ user, key: 'demo-key' })
      }
    }
    // The user: every recommendation answer echoes its uid, and the recently-viewed one lists
    // what that uid viewed. (The demo refuses a request without user.uid and user.sid, so every
    // other answer above read them too.)
    for (const [label] of REQUESTS.filter(([, request]) => request.type == 'recommendations')) expect(byLabel[label].meta.user_id, label).toBe(user.uid)
    expect(byLabel.latest.items.map((product: { id: string }) => product.id)).toEqual([item])
    // The sort: the sorted collection is echoed its rule and comes dearest first, unlike the unsorted one.
    const sorted = byLabel['smart collection, sorted']
    const ids = (answer: { items: { id: string }[] }) => answer.items.map((product) => product.id)
    expect(sorted.meta.sort).toEqual(SORTED)
    expect(ids(sorted)).not.toEqual(ids(byLabel['smart collection']))
    const prices = sorted.items.map((product: { price: number[] }) => product.price[0])
    expect(prices).toEqual([...prices].sort((a: number, b: number) => b - a))
    // Paging and the rest of the body were read as well.
    expect(byLabel.newest.items).toHaveLength(2)
    expect(byLabel.trending.items).toHaveLength(3)
    expect(byLabel.autocomplete.meta.item_limit).toBe(2)
    expect(ids(byLabel.trending)).not.toEqual(ids(byLabel.featured))
    expect(errors.pageErrors).toEqual([])
    await page.close()
  })

  it("our client's JSONP query writes the user, the sort and the filters byte for byte as the SDK's does", async () => {
    const user = { uid: 'same-uid', sid: 'same-sid', lang: ['en-US', 'de'], email: "o'neil+shop@example.com" }
    const filters = [{ name: 'category', type: 'category', values: [{ value: 'Apparel > Shirts (50%)' }] }]
    const page = await browser.newPage()
    const seen = recordDiscovery(page)
    await page.goto(pages.origin + '/shop')
    const answers = await page.evaluate(
      async ({ base, user, sort, filters }) => {
        const sdk = (window as any).FindifySDK.init({ key: 'demo-key', url: base + '/v3', user, method: 'jsonp', retryCount: 0 })
        const theirs = await sdk.send({ type: 'smart-collection', params: { slot: 'all', sort, filters } })
        const client = (window as any).discoveryFeedbackClient.createClient({ key: 'demo-key', baseUrl: base, user, jsonp: true })
        const ours = await client.smartCollection('all', { sort, filters })
        return [theirs, ours]
      },
      { base: demo.url, user, sort: SORTED, filters }
    )
    expect(seen.map((request) => [request.method, request.path])).toEqual([
      ['GET', '/v3/smart-collection/all'],
      ['GET', '/v3/smart-collection/all']
    ])
    // The parameters of the three fields, as they went over the wire, in order.
    const fields = (query: string) =>
      query
        .slice(1)
        .split('&')
        .filter((pair) => /^(user|sort|filters)%5B/.test(pair))
    const [theirs, ours] = seen.map((request) => fields(request.query))
    expect(theirs.length).toBe(10)
    expect(ours).toEqual(theirs)
    // And the demo read both alike.
    expect(answers[1].meta.sort).toEqual(answers[0].meta.sort)
    expect(answers[1].meta.filters).toEqual(filters)
    expect(answers[1].items).toEqual(answers[0].items)
    await page.close()
  })
})
