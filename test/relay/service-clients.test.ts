// @vitest-environment node
import { stringify } from 'qs'
import { describe, expect, it } from 'vitest'
import { createRelay, type BatchReport, type RelayOptions } from '../../src/relay'
import { read, recordingSink } from './support'

// What the service's own clients send, as the relay reads it: the feedback library's beacon
// (one envelope, the key in `?key=`), its image request (the envelope in the query, encoded by
// `qs` as the library calls it: `stringify(envelope)` with qs's defaults) and the SDK's post
// (properties at the top level, the key in `X-Key` and the body). The browser tests in
// service-clients.e2e.test.ts run the libraries themselves.

const URL_ = 'http://shop.test/v3/feedback'
const user = { uid: 'Ab3dE5gH7jK9mN1p', sid: 'Qr2sT4uV6wX8yZ0a', persist: true, exist: true }
const purchase = {
  order_id: '1001',
  currency: 'EUR',
  revenue: 166.9,
  line_items: [
    { item_id: '42', unit_price: 49.95, quantity: 2 },
    { item_id: '7', variant_item_id: '71', unit_price: 67, quantity: 1 }
  ]
}

function setup(options: Partial<RelayOptions> = {}) {
  const recorded = recordingSink()
  const reports: BatchReport[] = []
  const relay = createRelay({ keys: ['KEY'], sink: recorded.sink, onBatch: (report) => reports.push(report), ...options })
  const call = async (init: RequestInit & { query?: string } = {}) => {
    const response = await relay.fetch(new Request(URL_ + (init.query ?? ''), init), { remoteAddress: '203.0.113.9' })
    const type = response.headers.get('content-type')
    if (type == 'image/gif') return { status: response.status, headers: response.headers, bytes: new Uint8Array(await response.arrayBuffer()) }
    return read(response)
  }
  return { ...recorded, reports, call }
}

describe("the feedback library's beacon: one envelope, the key in the query", () => {
  it('is stored with the key from ?key=, the properties as SPEC has them, the user without the library’s own flags', async () => {
    const { call, events } = setup()
    const body = JSON.stringify({ event: 'click-item', properties: { item_id: '42', variant_item_id: '421', rid: 's-1' }, user, t_client: 1767261600000 })
    const answer = await call({ method: 'POST', query: '?key=KEY', body, headers: { 'content-type': 'text/plain;charset=UTF-8' } })
    expect(answer).toMatchObject({ status: 200, body: { accepted: 1, duplicates: 0, rejected: [] } })
    expect(events()).toEqual([
      expect.objectContaining({
        event: 'click-item',
        key: 'KEY',
        properties: { rid: 's-1', item_id: '42', variant_item_id: '421' },
        user: { uid: user.uid, sid: user.sid, ip: '203.0.113.9' },
        t_client: 1767261600000
      })
    ])
  })

  it('takes the key from X-Key too; a key in the envelope wins over both; an unknown one is still refused', async () => {
    const { call, events } = setup()
    const envelope = { event: 'view-page', properties: { url: 'https://shop.test/', ref: '', width: 1280, height: 800 }, user, t_client: 1 }
    expect(await call({ method: 'POST', body: JSON.stringify(envelope), headers: { 'x-key': 'KEY' } })).toMatchObject({ status: 200, body: { accepted: 1 } })
    expect(await call({ method: 'POST', query: '?key=OTHER', body: JSON.stringify({ ...envelope, key: 'KEY' }) })).toMatchObject({ status: 200 })
    expect(await call({ method: 'POST', query: '?key=OTHER', body: JSON.stringify(envelope) })).toMatchObject({
      status: 403,
      body: { error: { message: 'The API key is not valid.' } }
    })
    expect(await call({ method: 'POST', body: JSON.stringify(envelope) })).toMatchObject({ status: 401 })
    expect(events().map((event) => event.key)).toEqual(['KEY', 'KEY'])
  })
})

describe("the feedback library's image request: the envelope in the query", () => {
  it('stores a purchase with its numbers read back from text, answers a 1×1 GIF, and fills the variant it left out', async () => {
    const { call, events, reports } = setup()
    const query = '?' + stringify({ key: 'KEY', event: 'purchase', properties: purchase, user, t_client: 1767261600000 })
    expect(query).toContain('properties%5Bline_items%5D%5B0%5D%5Bunit_price%5D=49.95')
    const answer = await call({ method: 'GET', query })
    expect(answer.status).toBe(200)
    expect(answer.headers.get('content-type')).toBe('image/gif')
    expect(answer.headers.get('cache-control')).toBe('no-store')
    expect(Array.from((answer as { bytes: Uint8Array }).bytes.slice(0, 6))).toEqual([...'GIF89a'].map((char) => char.charCodeAt(0)))
    expect(events()).toEqual([
      expect.objectContaining({
        event: 'purchase',
        t_client: 1767261600000,
        properties: {
          ...purchase,
          line_items: [
            { item_id: '42', variant_item_id: '42', unit_price: 49.95, quantity: 2 },
            { item_id: '7', variant_item_id: '71', unit_price: 67, quantity: 1 }
          ]
        }
      })
    ])
    expect(reports[0].variantsFilled).toBe(1)
  })

  it('reads a view-page’s width and height and the user’s languages', async () => {
    const { call, events } = setup()
    const properties = { url: 'https://shop.test/p/42?x=1&y=2', ref: '', width: 390, height: 844, item_id: '42' }
    await call({ method: 'GET', query: '?' + stringify({ key: 'KEY', event: 'view-page', properties, user: { ...user, lang: ['de-CH', 'en'] }, t_client: 5 }) })
    expect(events()[0]).toMatchObject({ properties, user: { lang: ['de-CH', 'en'] }, t_client: 5 })
  })

  it('refuses by name what is wrong, as for a post: a quantity that is no number, a missing field, no key', async () => {
    const { call, events } = setup()
    const base = { key: 'KEY', event: 'add-to-cart', user, t_client: 1 }
    const notANumber = await call({ method: 'GET', query: '?' + stringify({ ...base, properties: { item_id: '42', rid: 'r-1', quantity: 'two' } }) })
    expect(notANumber).toMatchObject({ status: 400, body: { error: { message: 'add-to-cart: quantity must be a positive integer, got string' } } })
    const missing = await call({ method: 'GET', query: '?' + stringify({ ...base, properties: { item_id: '42', quantity: 1 } }) })
    expect(missing).toMatchObject({ status: 400, body: { error: { message: 'add-to-cart: rid is required' } } })
    const keyless = await call({ method: 'GET', query: '?' + stringify({ ...base, key: undefined, properties: { item_id: '42', rid: 'r', quantity: 1 } }) })
    expect(keyless).toMatchObject({ status: 401 })
    expect(events()).toEqual([])
  })

  it('keeps a hostile query from the prototype and from depth', async () => {
    const { call, events } = setup()
    const hostile =
      '?key=KEY&event=click-item&t_client=1&user[uid]=u&user[sid]=s&properties[item_id]=42&properties[__proto__][polluted]=1&a[b][c][d][e][f][g][h]=1'
    expect(await call({ method: 'GET', query: hostile })).toMatchObject({ status: 200 })
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(events()[0].properties).toEqual({ item_id: '42', variant_item_id: '42' })
  })
})

describe("the SDK's feedback request: properties at the top level", () => {
  it('gathers them into properties, with the key from the body and X-Key', async () => {
    const { call, events, reports } = setup()
    const body = { user: { uid: 'u1', sid: 's1' }, t_client: 1767261600000, key: 'KEY', event: 'click-item', item_id: '42', rid: 'r-1' }
    const answer = await call({ method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', 'x-key': 'KEY' } })
    expect(answer).toMatchObject({ status: 200, body: { accepted: 1 } })
    expect(events()[0]).toMatchObject({ event: 'click-item', properties: { item_id: '42', variant_item_id: '42', rid: 'r-1' }, user: { uid: 'u1', sid: 's1' } })
    expect(reports[0].variantsFilled).toBe(1)
  })

  it('refuses what is still wrong by name, and a variant given is never replaced', async () => {
    const { call, events } = setup()
    const base = { user: { uid: 'u1', sid: 's1' }, t_client: 1, key: 'KEY' }
    const noLines = await call({ method: 'POST', body: JSON.stringify({ ...base, event: 'purchase', order_id: '1', currency: 'EUR', revenue: 1 }) })
    expect(noLines).toMatchObject({ status: 400, body: { error: { message: 'purchase: line_items is required' } } })
    await call({ method: 'POST', body: JSON.stringify({ ...base, event: 'add-to-cart', item_id: '42', variant_item_id: '421', rid: 'r', quantity: 1 }) })
    expect(events().map((event) => event.properties)).toEqual([{ item_id: '42', variant_item_id: '421', rid: 'r', quantity: 1 }])
  })
})
