import { describe, expect, it } from 'vitest'
import { checkUser, EVENTS, validate } from '../../src/shared/rules'

const line = { item_id: '42', variant_item_id: '421', unit_price: 19.9, quantity: 2 }

// One valid property bag per SPEC event kind, with every optional field given.
const VALID: Record<string, Record<string, unknown>> = {
  'click-suggestion': { rid: 'a-1', suggestion: 'red shoes' },
  'click-item': { rid: 's-1', item_id: '42', variant_item_id: '421' },
  redirect: { rid: 'a-2', suggestion: 'sale' },
  purchase: {
    order_id: 'o-1',
    currency: 'EUR',
    revenue: 39.8,
    total_discount: 0,
    total_tax: 6.36,
    total_shipping: 4.5,
    affiliation: 'web',
    line_items: [line]
  },
  'update-cart': { line_items: [line] },
  'add-to-cart': { item_id: '42', variant_item_id: '421', quantity: 1, rid: 'c-1' },
  'view-page': { url: 'https://shop.example/p/42', ref: '', width: 1280, height: 720, item_id: '42', variant_item_id: '421' }
}

const message = (event: unknown, properties: unknown) => {
  try {
    validate(event, properties)
  } catch (error) {
    return (error as Error).message
  }
  return 'accepted'
}

describe('validate', () => {
  it('covers exactly the seven SPEC events', () => {
    expect(Object.keys(EVENTS).sort()).toEqual(Object.keys(VALID).sort())
  })

  for (const [event, properties] of Object.entries(VALID)) {
    it(`accepts a complete ${event} and copies it`, () => {
      const copy = validate(event, properties)
      expect(copy).toEqual(properties)
      expect(copy).not.toBe(properties)
    })

    for (const field of Object.keys(EVENTS[event as keyof typeof EVENTS])) {
      const optional = EVENTS[event as keyof typeof EVENTS][field].endsWith('?')
      it(`${optional ? 'accepts' : 'refuses'} ${event} without ${field}`, () => {
        const { [field]: _, ...rest } = properties
        expect(message(event, rest)).toBe(optional ? 'accepted' : `discovery-feedback: ${event}: ${field} is required`)
      })
    }
  }

  it('accepts click-item without rid, for items the service did not return', () => {
    expect(validate('click-item', { item_id: '1', variant_item_id: '1' })).toEqual({ item_id: '1', variant_item_id: '1' })
  })

  it('accepts an empty ref (a direct visit) but not an empty url', () => {
    expect(message('view-page', { ...VALID['view-page'], ref: '' })).toBe('accepted')
    expect(message('view-page', { ...VALID['view-page'], url: '' })).toBe('discovery-feedback: view-page: url must be a non-empty string, got string')
  })

  it.each([
    ['click-item', { item_id: 42, variant_item_id: '1' }, 'item_id must be a non-empty string, got 42'],
    ['click-suggestion', { rid: 'a', suggestion: '' }, 'suggestion must be a non-empty string, got string'],
    ['purchase', { ...VALID.purchase, revenue: '39.80' }, 'revenue must be a finite number, got string'],
    ['purchase', { ...VALID.purchase, revenue: NaN }, 'revenue must be a finite number, got NaN'],
    ['purchase', { ...VALID.purchase, total_tax: Infinity }, 'total_tax must be a finite number, got Infinity'],
    ['purchase', { ...VALID.purchase, affiliation: 3 }, 'affiliation must be a non-empty string, got 3'],
    ['purchase', { ...VALID.purchase, line_items: {} }, 'line_items must be an array of line items, got object'],
    ['purchase', { ...VALID.purchase, line_items: [line, null] }, 'line_items[1] must be an object, got object'],
    ['purchase', { ...VALID.purchase, line_items: [{ ...line, unit_price: '9' }] }, 'line_items[0].unit_price must be a finite number, got string'],
    ['update-cart', { line_items: [{ ...line, quantity: 1.5 }] }, 'line_items[0].quantity must be a positive integer, got 1.5'],
    ['update-cart', { line_items: [{ ...line, variant_item_id: undefined }] }, 'line_items[0].variant_item_id is required'],
    ['add-to-cart', { ...VALID['add-to-cart'], quantity: 0 }, 'quantity must be a positive integer, got 0'],
    ['view-page', { ...VALID['view-page'], width: -1 }, 'width must be a non-negative integer, got -1'],
    ['view-page', { ...VALID['view-page'], height: 700.5 }, 'height must be a non-negative integer, got 700.5']
  ])('names event, field and rule for a bad %s', (event, properties, rule) => {
    expect(message(event, properties)).toBe(`discovery-feedback: ${event}: ${rule}`)
  })

  it.each([
    [null, 'got object'],
    [undefined, 'got undefined'],
    ['text', 'got string'],
    [[], 'got array']
  ])('refuses %s as properties', (properties, got) => {
    expect(message('redirect', properties)).toBe(`discovery-feedback: redirect: properties must be an object, ${got}`)
  })

  it('refuses unknown and non-string event names, listing the known ones', () => {
    expect(message('click', {})).toMatch(/^discovery-feedback: click: event must be one of click-suggestion, .*view-page, got an unknown name$/)
    expect(message(undefined, {})).toMatch(/^discovery-feedback: event must be one of .*, got undefined$/)
    expect(message('toString', {})).toMatch(/got an unknown name$/)
  })

  it('leaves out fields SPEC does not define, and null optional ones', () => {
    expect(validate('redirect', { rid: 'a', suggestion: 'b', extra: 1 })).toEqual({ rid: 'a', suggestion: 'b' })
    expect(validate('purchase', { ...VALID.purchase, total_tax: null })).not.toHaveProperty('total_tax')
  })
})

describe('user ids (SPEC "Limits": 1 to 32 characters)', () => {
  // A merchant's own ids at the bound: an MD5 in hex, a UUID without its dashes.
  const md5 = '9e107d9d372bb6826bd81d3542a419d6'
  const uuid = '123e4567e89b12d3a456426614174000'

  it.each(['uid', 'sid'])('takes a %s of exactly 1 and exactly 32 characters', (field) => {
    expect(md5).toHaveLength(32)
    expect(uuid).toHaveLength(32)
    for (const id of ['7', md5, uuid]) expect(checkUser('identify', { [field]: id })).toEqual({ [field]: id })
  })

  it.each(['uid', 'sid'])('refuses a %s of 33 characters or none, naming the field and the bound', (field) => {
    for (const id of [md5 + 'f', '']) {
      expect(() => checkUser('identify', { [field]: id })).toThrow(
        `discovery-feedback: identify: user.${field} must be a string of 1 to 32 characters, got string`
      )
    }
  })
})
