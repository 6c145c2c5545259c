// @vitest-environment node
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import qs from 'qs'
import { describe, expect, it } from 'vitest'
import { queryString } from '../../src/client/query-string'
import { random } from '../support/fuzz.mjs'

// The oracle is qs itself, called with the options the service's SDK passes it for a JSONP
// request, read from the SDK's own published code (lib/api.js) so that the two cannot drift apart.
const sdkApi = readFileSync(createRequire(import.meta.url).resolve('@findify/sdk/lib/api.js'), 'utf8')
const optionsText = sdkApi.match(/qs\.stringify\(req\.body, (\{[^}]*\})\)/)?.[1]
const SDK_OPTIONS: qs.IStringifyOptions = JSON.parse(optionsText!.replace(/(\w+):/g, '"$1":'))
/** The query the SDK writes for a body, without the `?` its options add. */
const sdkQuery = (body: Record<string, unknown>) => qs.stringify(body, SDK_OPTIONS).replace(/^\?/, '')

const user = { uid: 'u1', sid: 's1', email: 'a+b@shop.example', ip: '10.0.0.1', ua: 'Mozilla/5.0 (X11; Linux x86_64)', lang: ['en-US', 'de'] }

describe('queryString writes what the service’s SDK writes', () => {
  it('reads the options from the SDK: qs defaults, with only a "?" in front', () => {
    expect(SDK_OPTIONS).toEqual({ addQueryPrefix: true })
  })

  it('names nested fields by their path in brackets, percent-encoded, and array entries by index', () => {
    expect(queryString({ user: { uid: 'u1', sid: 's1' }, sort: [{ field: 'price', order: 'desc' }] })).toBe(
      'user%5Buid%5D=u1&user%5Bsid%5D=s1&sort%5B0%5D%5Bfield%5D=price&sort%5B0%5D%5Border%5D=desc'
    )
  })

  it.each([
    ['autocomplete', { user, t_client: 1767261600000, q: 'linen shirt', suggestion_limit: 4, item_limit: 4, log: true }],
    [
      'content search',
      {
        user,
        t_client: '1767261600000',
        q: 'boots & caps',
        type: ['instagram', 'tiktok'],
        sort: [{ field: 'created_time', order: 'desc' }],
        filters: [{ name: 'hashtags', type: 'text', values: [{ value: 'summer' }, { value: 'sale 50%' }] }],
        offset: 0,
        limit: 10
      }
    ],
    [
      'smart collection',
      {
        user,
        t_client: 1,
        sort: [
          { field: 'price', order: 'desc' },
          { field: 'title', order: 'asc' }
        ],
        filters: [{ name: 'category', type: 'category', values: [{ value: 'Apparel > Shirts' }] }],
        rules: [{ action: 'include', type: 'text', name: 'brand', values: ['Demo', 'Ünïcode'] }],
        offset: 12,
        limit: 12
      }
    ],
    ['slot recommendation', { user, t_client: 1, item_id: '1001', item_ids: ['1001', '1002'], offset: 0, limit: 4 }],
    ['the SDK’s own body, with its key and the type its omit leaves in', { user, t_client: 1, key: 'demo-key', type: 'trending', limit: 3, offset: 6 }]
  ])('a %s body', (_, body) => {
    expect(queryString(body)).toBe(sdkQuery(body))
  })

  it('null is an empty value; undefined, an empty array and an empty object leave nothing', () => {
    const body = { a: null, b: undefined, c: [], d: {}, e: { f: null, g: undefined, h: [] }, i: [null, undefined, 0], j: false, k: 0 }
    expect(queryString(body)).toBe(sdkQuery(body))
    expect(queryString(body)).toBe('a=&e%5Bf%5D=&i%5B0%5D=&i%5B2%5D=0&j=false&k=0')
  })

  it('escapes every character but letters, digits and -._~, in names and values alike', () => {
    const text = ' !"#$%&\'()*+,/:;<=>?@[\\]^`{|}~-._ é ß 中文 😀 \n\t'
    const body = { [text]: text, nested: { [text]: [text] }, 'x[y]': 'z' }
    expect(queryString(body)).toBe(sdkQuery(body))
    expect(queryString({ q: "it's (50%)*!" })).toBe('q=it%27s%20%2850%25%29%2A%21')
  })

  it('numbers as JavaScript writes them', () => {
    const body = { a: -1.5, b: 1e21, c: 0.1 + 0.2, d: Number.MAX_SAFE_INTEGER, e: -0, f: Number.NaN, g: Number.POSITIVE_INFINITY }
    expect(queryString(body)).toBe(sdkQuery(body))
  })

  it('agrees with qs on 500 random bodies of plain data', () => {
    const next = random(7)
    const pick = <T>(list: T[]) => list[Math.floor(next() * list.length)]
    const TEXTS = ['', 'a', 'linen shirt', 'ü', '😀', '[]', 'a=b&c', '%', '+', "'", '~', '0', 'true', 'null', '__proto__x']
    const value = (depth: number): unknown => {
      const kind = next()
      if (depth < 4 && kind < 0.2) return Array.from({ length: Math.floor(next() * 4) }, () => value(depth + 1))
      if (depth < 4 && kind < 0.4)
        return Object.fromEntries(Array.from({ length: Math.floor(next() * 4) }, () => [pick(TEXTS) + pick(TEXTS), value(depth + 1)]))
      if (kind < 0.5) return pick([null, undefined, true, false])
      if (kind < 0.7) return Math.round((next() - 0.5) * 1e6) / pick([1, 100])
      return pick(TEXTS) + pick(TEXTS)
    }
    for (let run = 0; run < 500; run++) {
      const body = { user: { uid: 'u' + run, sid: 's' }, field: value(0), other: value(1) }
      expect(queryString(body), JSON.stringify(body)).toBe(sdkQuery(body))
    }
  })

  it('gives back the body, every value as text, to qs.parse on the server', () => {
    const body = { user, t_client: 1, sort: [{ field: 'price', order: 'desc' }], filters: [{ name: 'size', type: 'text', values: [{ value: 'M & L' }] }] }
    const text = (value: unknown): unknown =>
      Array.isArray(value)
        ? value.map(text)
        : value && typeof value == 'object'
          ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, text(v)]))
          : String(value)
    expect(qs.parse(queryString(body))).toEqual(text(body))
  })

  it('throws before anything is sent for a field a query cannot hold, as JSON.stringify does for a POST', () => {
    const cycle: Record<string, unknown> = {}
    cycle.self = cycle
    expect(() => queryString({ cycle })).toThrow(RangeError)
    expect(() => queryString({ q: 'broken \ud800 half' })).toThrow(URIError)
  })
})
