import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import Ajv2020 from 'ajv/dist/2020'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { checkEnvelope } from '../../src/relay/envelopes'
import { validate } from '../../src/shared/rules'
import type { EventName } from '../../src/index'
import { createServerTracker } from '../../src/server'
import { quietConsole } from '../support/console'
import { errorsOf, openapiSchema } from '../support/contract'
import { isolateEachTest, make, network, settle } from '../support/helpers'

/*
 * schema/envelope.json is the contract others build on (a sender in another language, a
 * warehouse loader). It must say what the library's own rules say, so both judge the same
 * envelopes here, made by changing one field at a time of valid ones, and must agree on each.
 */

const schema = JSON.parse(readFileSync('schema/envelope.json', 'utf8'))
const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true })
ajv.addSchema(schema)
const schemaAccepts = (value: unknown, pointer = '') => ajv.validate(schema.$id + pointer, value) as boolean

/** The library's verdict: the relay's check, which runs validate() and SPEC's user rules, for a relay that takes the envelope's key. */
function libraryAccepts(envelope: unknown): boolean {
  const key = (envelope as { key?: unknown } | null)?.key
  return !('error' in checkEnvelope(envelope, new Set([typeof key == 'string' ? key : 'API_KEY'])))
}

function validateAccepts(event: unknown, properties: unknown): boolean {
  try {
    validate(event, properties)
    return true
  } catch {
    return false
  }
}

const LINE = { item_id: '42', variant_item_id: '421', unit_price: 29.9, quantity: 2 }
const FULL: Record<EventName, Record<string, unknown>> = {
  'click-suggestion': { rid: 'a-1', suggestion: 'shirt' },
  'click-item': { rid: 's-1', item_id: '42', variant_item_id: '421' },
  redirect: { rid: 's-2', suggestion: 'sale' },
  purchase: {
    order_id: '1001',
    currency: 'EUR',
    revenue: 64.7,
    total_discount: 0,
    total_tax: 9.5,
    total_shipping: 4.9,
    affiliation: 'web',
    line_items: [LINE]
  },
  'update-cart': { line_items: [LINE, { ...LINE, item_id: '43' }] },
  'add-to-cart': { item_id: '42', variant_item_id: '421', quantity: 1, rid: 'r-3' },
  'view-page': { url: 'https://shop.example/p/42', ref: '', width: 1280, height: 720, item_id: '42', variant_item_id: '421' }
}
const USER = { uid: 'V1StGXR8_Z5jdHi6B-myT', sid: 'Uakgb_J5m9g-0JDMbcJqL', email: '', ip: '203.0.113.7', ua: 'Mozilla/5.0', lang: ['de-CH', 'en'] }
const EVENT_NAMES = Object.keys(FULL) as EventName[]

const envelopeOf = (event: string, properties: unknown, user: unknown = USER) => ({
  event,
  properties,
  key: 'API_KEY',
  t_client: 1767261600000,
  user,
  event_id: 'p3Sa9Kd0hT2xq8Lm.1'
})

/** The valid envelopes changes start from: each event with every field, and with the required ones only. */
function bases() {
  return EVENT_NAMES.flatMap((event) => {
    const required = schema.$defs[event].required as string[]
    const minimal = Object.fromEntries(Object.entries(FULL[event]).filter(([field]) => required.includes(field)))
    return [envelopeOf(event, FULL[event]), envelopeOf(event, minimal, { uid: USER.uid, sid: USER.sid })]
  })
}

// Boundary and wrong values, tried at every field: lengths around the id limit (32) and the
// event id's (64), empty and one-character strings, numbers around the integer rules, and each
// other JSON type.
const VALUES: unknown[] = [
  undefined,
  null,
  '',
  ' ',
  'x',
  'a'.repeat(32),
  'a'.repeat(33),
  'a'.repeat(64),
  'a'.repeat(65),
  0,
  -0,
  1,
  -1,
  2,
  1.5,
  -0.5,
  1e21,
  -1e21,
  Number.MAX_SAFE_INTEGER + 2,
  true,
  false,
  [],
  ['en'],
  [1],
  [null],
  [''],
  {},
  { a: 1 },
  [LINE],
  [{ ...LINE, quantity: 0 }],
  [{}]
]

/** Every path to a field of an envelope, objects and arrays included, as lists of keys. */
function paths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  if (!value || typeof value != 'object') return []
  const entries = Array.isArray(value) ? value.map((item, index) => [index, item] as const) : Object.entries(value)
  return entries.flatMap(([key, child]) => [[...prefix, key], ...paths(child, [...prefix, key])])
}

function withValue(envelope: object, path: (string | number)[], value: unknown) {
  const copy = structuredClone(envelope) as Record<string | number, unknown>
  let target = copy
  for (const key of path.slice(0, -1)) target = target[key] as Record<string | number, unknown>
  const last = path[path.length - 1]
  if (value === undefined) delete target[last]
  else target[last] = structuredClone(value)
  return copy
}

/**
 * Every envelope to judge: each base with one field changed (or added) to each value, events
 * swapped, and non-objects. Each as JSON carries it, since that is what a collector reads: an
 * array entry taken out leaves a null.
 */
function cases(): unknown[] {
  const all: unknown[] = [null, [], 'click-item', 1, true]
  for (const base of bases()) {
    all.push(base)
    const extra = [['extra'], ['properties', 'extra'], ['user', 'extra'], ['user', 'email'], ['user', 'ip'], ['user', 'ua'], ['user', 'lang'], ['event_id']]
    const fields = [...paths(base), ...extra, ...Object.keys(FULL[base.event as EventName]).map((field) => ['properties', field])]
    for (const path of fields) for (const value of VALUES) all.push(withValue(base, path, value))
    for (const event of [...EVENT_NAMES, 'Click-Item', 'click_item', 'view']) all.push({ ...base, event })
  }
  return all.map((envelope) => JSON.parse(JSON.stringify(envelope)))
}

describe('schema/envelope.json', () => {
  it('is a valid JSON Schema of draft 2020-12, compiled in strict mode', () => {
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema')
    expect(ajv.validateSchema(schema)).toBe(true)
    expect(ajv.getSchema(schema.$id)).toBeTypeOf('function')
  })

  it('has one rule set per event, the library’s seven', () => {
    expect(schema.$defs.eventName.enum).toEqual(EVENT_NAMES)
    for (const event of EVENT_NAMES) expect(schema.$defs[event].type).toBe('object')
  })

  it('gives every generated envelope the verdict of the relay’s check, which runs the library’s validate()', () => {
    const all = cases()
    const disagreements = all.filter((envelope) => schemaAccepts(envelope) != libraryAccepts(envelope))
    expect(disagreements.map((envelope) => JSON.stringify(envelope))).toEqual([])
    // Both verdicts come up often: a generator that made only valid or only invalid envelopes would prove nothing.
    const accepted = all.filter(libraryAccepts).length
    expect(accepted).toBeGreaterThan(500)
    expect(all.length - accepted).toBeGreaterThan(5000)
  })

  it('gives every generated set of properties the verdict of validate(), event by event', () => {
    const named = (envelope: unknown): envelope is { event: EventName; properties: unknown } =>
      (EVENT_NAMES as unknown[]).includes((envelope as { event?: unknown } | null)?.event)
    const all = cases().filter(named)
    const disagreements = all.filter(({ event, properties }) => schemaAccepts(properties, '#/$defs/' + event) != validateAccepts(event, properties))
    expect(disagreements.map((envelope) => JSON.stringify(envelope))).toEqual([])
  })

  it('says where it counts length otherwise than the library: an id of 17 emoji is 17 characters and 34 UTF-16 code units', () => {
    const envelope = envelopeOf('click-item', FULL['click-item'], { uid: '😀'.repeat(17), sid: USER.sid })
    expect(schemaAccepts(envelope)).toBe(true)
    expect(libraryAccepts(envelope)).toBe(false)
    expect(schema.$defs.id.description).toContain('UTF-16 code units')
  })
})

describe('the contract in the package', () => {
  it('ships schema/ and names each file in exports, so that others import it by the package’s name', () => {
    const manifest = JSON.parse(readFileSync('package.json', 'utf8'))
    expect(manifest.files).toContain('schema')
    const resolve = createRequire(import.meta.url).resolve
    for (const file of ['envelope.json', 'openapi.json']) {
      expect(manifest.exports['./schema/' + file]).toBe('./schema/' + file)
      expect(resolve('discovery-feedback/schema/' + file)).toBe(resolve('../../schema/' + file))
    }
  })
})

describe('what the library sends keeps schema/envelope.json', () => {
  isolateEachTest()
  beforeEach(() => quietConsole())

  it('every event of a tracker in a page, automatic view-page and identified shopper included', async () => {
    const net = network()
    const tracker = make({ autoViewPage: true, user: { email: 'shopper@example.com' } })
    await settle()
    tracker.clickSuggestion({ rid: 'a-1', suggestion: 'shirt' })
    tracker.clickItem({ rid: 's-1', item_id: '42', variant_item_id: '421' })
    tracker.clickItem({ item_id: '43', variant_item_id: '431' })
    tracker.redirect({ rid: 's-2', suggestion: 'sale' })
    tracker.addToCart({ item_id: '42', variant_item_id: '421', quantity: 1, rid: 'r-3' })
    tracker.updateCart({ line_items: [LINE] })
    tracker.updateCart({ line_items: [] })
    tracker.purchase({
      order_id: '1001',
      currency: 'EUR',
      revenue: 64.7,
      total_tax: 9.5,
      total_shipping: 4.9,
      total_discount: 0,
      affiliation: 'web',
      line_items: [LINE]
    })
    tracker.viewPage({ item_id: '42', variant_item_id: '421' })
    history.pushState(null, '', '/cart')
    await tracker.flush()
    await settle()
    const sent = net.events()
    // The seven events, the add-to-cart's own click-item and the automatic views.
    expect(new Set(sent.map(({ event }) => event))).toEqual(new Set(EVENT_NAMES))
    for (const envelope of sent) expect({ envelope, valid: schemaAccepts(envelope), errors: ajv.errors }).toMatchObject({ valid: true })
  })

  it('every event of the Node sender', async () => {
    const bodies: string[] = []
    vi.useRealTimers()
    vi.stubGlobal('fetch', (_url: string, init: RequestInit) => {
      bodies.push(init.body as string)
      return Promise.resolve(new Response('{}', { status: 200 }))
    })
    const feedback = createServerTracker({ key: 'API_KEY', endpoint: 'https://collector.example/v3/feedback' })
    const user = { uid: USER.uid, sid: USER.sid, ip: '203.0.113.7', ua: 'Mozilla/5.0' }
    for (const event of EVENT_NAMES) feedback.track(event, FULL[event] as never, user)
    await feedback.close()
    const sent = bodies.flatMap((body) => JSON.parse(body))
    // An add-to-cart brings its click-item, as SPEC asks of every sender.
    expect(sent.map(({ event }: { event: string }) => event)).toEqual(
      EVENT_NAMES.flatMap((event) => (event == 'add-to-cart' ? ['click-item', event] : [event]))
    )
    for (const envelope of sent) expect({ envelope, valid: schemaAccepts(envelope) }).toMatchObject({ valid: true })
  })

  it("every event of a tracker sending straight to the service (format: 'spec') keeps the OpenAPI document's SpecEnvelope", async () => {
    const net = network()
    const tracker = make({ format: 'spec' })
    tracker.clickItem({ rid: 's-1', item_id: '42', variant_item_id: '421' })
    tracker.addToCart({ item_id: '42', variant_item_id: '421', quantity: 1, rid: 'r-3' })
    tracker.purchase(FULL.purchase as never)
    tracker.viewPage({})
    await tracker.flush()
    await settle()
    const bodies = net.delivered.map(({ body }) => JSON.parse(body))
    expect(bodies).toHaveLength(5)
    for (const body of bodies) expect(errorsOf(openapiSchema('#/components/schemas/SpecEnvelope'), body)).toEqual([])
  })
})
