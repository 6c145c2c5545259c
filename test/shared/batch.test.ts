import { describe, expect, it, vi } from 'vitest'
import { byteLength, pack } from '../../src/shared/batch'
import { envelope } from '../../src/shared/envelope'
import type { Entry } from '../../src/browser/outbox'
import type { Envelope } from '../../src/index'

const user = { uid: 'u', sid: 's', ua: 'test', lang: ['en'] }
const click = (item_id: string) => envelope('click-item', { item_id, variant_item_id: item_id }, 'KEY', user)
const entries = (events: Envelope[]): Entry[] => events.map((event) => ({ event }))

describe('envelope', () => {
  it("has SPEC's generic structure, the call time and a unique event_id", () => {
    vi.useFakeTimers({ now: 1767261600000 })
    const one = click('1')
    const two = click('1')
    vi.useRealTimers()
    expect(one).toEqual({
      event: 'click-item',
      properties: { item_id: '1', variant_item_id: '1' },
      key: 'KEY',
      t_client: 1767261600000,
      user,
      event_id: expect.stringMatching(/^[\w-]{16}\.[0-9a-z]+$/)
    })
    expect(two.event_id).not.toBe(one.event_id)
  })
})

describe('byteLength', () => {
  it('counts the UTF-8 bytes the wire carries, in ASCII and beyond', () => {
    // '\x7f' is the last one-byte character, '\x80' the first of two; a lone surrogate half goes out as U+FFFD, 3 bytes.
    for (const text of ['', 'abc', '\x7f', '\x80', 'Grüße', '価格', '€9,99', '👟', 'a\ud83d', JSON.stringify({ q: 'Schuhe für 50 €' })])
      expect(byteLength(text)).toBe(new TextEncoder().encode(text).length)
  })
})

describe('pack', () => {
  it('puts a small batch in one JSON array body, in order', () => {
    const events = [click('1'), click('2'), click('3')]
    const bodies = pack(entries(events), 16384, () => {})
    expect(bodies).toHaveLength(1)
    expect(JSON.parse(bodies[0].body)).toEqual(events)
    expect(bodies[0].entries.map((entry) => entry.event)).toEqual(events)
    expect(bodies[0].bytes).toBe(new TextEncoder().encode(bodies[0].body).length)
  })

  it('splits a large batch into bodies that each stay within the limit, losing nothing', () => {
    const events = Array.from({ length: 1000 }, (_, i) => click('item-' + i + '-ü'))
    for (const limit of [1000, 16384, 61440]) {
      const bodies = pack(entries(events), limit, () => {})
      expect(bodies.length).toBeGreaterThan(1)
      for (const { body, bytes } of bodies) {
        expect(bytes).toBeGreaterThanOrEqual(new TextEncoder().encode(body).length)
        expect(bytes).toBeLessThanOrEqual(limit)
      }
      const sent = bodies.flatMap(({ body }) => JSON.parse(body) as Envelope[])
      expect(sent.map((event) => event.event_id)).toEqual(events.map((event) => event.event_id))
    }
  })

  it('fills bodies close to the limit', () => {
    const events = Array.from({ length: 500 }, (_, i) => click(String(i)))
    const bodies = pack(entries(events), 16384, () => {})
    for (const { body } of bodies.slice(0, -1)) expect(body.length).toBeGreaterThan(16384 - JSON.stringify(events[0]).length - 2)
  })

  it('hands an event too large for any body to onTooLarge and sends the rest', () => {
    const huge = envelope('click-item', { item_id: 'x'.repeat(2000), variant_item_id: '1' }, 'KEY', user)
    const tooLarge = vi.fn()
    const bodies = pack(entries([click('1'), huge, click('2')]), 1000, tooLarge)
    expect(tooLarge).toHaveBeenCalledWith(expect.objectContaining({ event: huge }))
    expect(bodies.flatMap(({ entries }) => entries).map((entry) => entry.event.properties)).toEqual([
      { item_id: '1', variant_item_id: '1' },
      { item_id: '2', variant_item_id: '2' }
    ])
  })
})
