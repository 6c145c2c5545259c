import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { trackDeclarative } from '../../src/browser/declarative'
import type { Tracker } from '../../src/index'

const fakeTracker = () => {
  const calls: [string, unknown][] = []
  const tracker: Pick<Tracker, 'track'> = { track: (event, properties) => void calls.push([event, properties]) }
  return { tracker, calls }
}

let stop: () => void
beforeEach(() => {
  document.body.innerHTML = ''
})
afterEach(() => stop && stop())

describe('declarative tracking', () => {
  it('sends click-item for a click anywhere inside a tile, with the rid of an ancestor', () => {
    document.body.innerHTML = `<section data-df-rid="r-shelf"><a data-df-item-id="42" data-df-variant-id="421" href="#"><img alt=""><span>Shoe</span></a></section>`
    const { tracker, calls } = fakeTracker()
    stop = trackDeclarative(tracker)
    document.querySelector('span')!.click()
    expect(calls).toEqual([['click-item', { item_id: '42', variant_item_id: '421', rid: 'r-shelf' }]])
  })

  it('sees tiles added later, and add-to-cart buttons inside them', () => {
    const { tracker, calls } = fakeTracker()
    stop = trackDeclarative(tracker)
    document.body.innerHTML = `<div data-df-item-id="7" data-df-variant-id="71" data-df-rid="r-1"><button data-df-add-to-cart data-df-quantity="2">Add</button></div>`
    document.querySelector('button')!.click()
    expect(calls).toEqual([['add-to-cart', { item_id: '7', variant_item_id: '71', rid: 'r-1', quantity: 2 }]])
  })

  it('reads purchase and cart blocks once, as data', () => {
    const order = { order_id: 'o-1', currency: 'EUR', revenue: 10, line_items: [] }
    document.body.innerHTML =
      `<script type="application/json" data-df-purchase>${JSON.stringify(order)}</script>` +
      `<script type="application/json" data-df-cart>{"line_items": []}</script>` +
      `<script type="application/json" data-df-cart>alert(1)</script>`
    const alert = vi.fn()
    vi.stubGlobal('alert', alert)
    const { tracker, calls } = fakeTracker()
    stop = trackDeclarative(tracker)
    stop()
    stop = trackDeclarative(tracker)
    expect(calls).toEqual([
      ['purchase', order],
      ['update-cart', { line_items: [] }],
      ['update-cart', 'not JSON']
    ])
    expect(alert).not.toHaveBeenCalled()
    vi.unstubAllGlobals()
  })

  it('ignores clicks outside tiles and stops when asked', () => {
    document.body.innerHTML = `<p>text</p><a data-df-item-id="1" data-df-variant-id="1">x</a>`
    const { tracker, calls } = fakeTracker()
    stop = trackDeclarative(tracker)
    document.querySelector('p')!.click()
    stop()
    document.querySelector('a')!.click()
    expect(calls).toEqual([])
  })
})

describe('rids across pages of a session', () => {
  it('finds the rid of a response another page of this tab remembered', async () => {
    sessionStorage.setItem('df_rids', JSON.stringify([{ rid: 's-earlier', item_id: ['42'] }]))
    vi.resetModules()
    const { ridFor, remember } = await import('../../src/shared/rids')
    expect(ridFor('item_id', '42')).toBe('s-earlier')
    remember({ meta: { rid: 'a-new' }, suggestions: [{ value: 'boots' }] })
    expect(ridFor('suggestion', 'boots')).toBe('a-new')
    expect(JSON.parse(sessionStorage.getItem('df_rids')!).map((seen: { rid: string }) => seen.rid)).toEqual(['a-new', 's-earlier'])
    for (let i = 0; i < 60; i++) remember({ meta: { rid: 'r-' + i }, items: [{ id: i }] })
    expect(JSON.parse(sessionStorage.getItem('df_rids')!)).toHaveLength(50)
  })
})
