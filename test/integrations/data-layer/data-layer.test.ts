import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { bridgeDataLayer } from '../../../src/integrations/data-layer/bridge'
import type { DataLayerOptions } from '../../../src/integrations/data-layer/types'
import { quietConsole } from '../../support/console'
import { isolateEachTest, make, setVisibility, stored } from '../../support/helpers'
import type { EventName, FeedbackError } from '../../../src/shared/types'
import { endRecordingTrackers, recordingTracker } from './recording-tracker'

/**
 * A tracker that checks each event by SPEC's rules and records it, and keeps the add-on contract;
 * a view-page is completed from the page first, as the real tracker does.
 */
const fakeTracker = recordingTracker

// Google's own snippet: each call pushes its real `arguments` object.
const gtagOf = (dataLayer: unknown[]) =>
  function gtag(..._args: unknown[]) {
    // eslint-disable-next-line prefer-rest-params
    dataLayer.push(arguments)
  }

const nextTask = () => new Promise((resolve) => setTimeout(resolve))

const shirt = { item_id: 'SKU-1', item_name: 'Shirt', price: 20, quantity: 2, discount: 5 }
const socks = { item_id: 'SKU-2', item_name: 'Socks', price: '4.50', quantity: 1 }
const purchase = { transaction_id: 'T-1001', currency: 'EUR', value: 44.5, tax: 8.46, shipping: 4.9, items: [shirt, socks] }

const page = window as Window & { dataLayer?: unknown[] }
const stops: (() => void)[] = []
let errors: FeedbackError[] = []

/** A bridge on a fresh data layer, reporting into `errors`. */
function start(options: DataLayerOptions = {}) {
  const tracker = fakeTracker({}, { autoViewPage: options.autoViewPage })
  const dataLayer = options.dataLayer || []
  stops.push(bridgeDataLayer(tracker, { dataLayer, onError: (error) => errors.push(error), ...options }))
  return { tracker, dataLayer, gtag: gtagOf(dataLayer) }
}

beforeEach(() => {
  errors = []
  sessionStorage.clear()
  // The tracker's uid cookie: it keeps its ids, so the bridge may keep the cart.
  document.cookie = 'df_uid=u-1; path=/'
  vi.spyOn(console, 'error').mockImplementation(() => {})
})
afterEach(() => {
  stops.splice(0).forEach((stop) => stop())
  endRecordingTrackers()
  delete page.dataLayer
  document.cookie = 'df_uid=; path=/; max-age=0'
  vi.restoreAllMocks()
})

describe('bridgeDataLayer', () => {
  it('maps a purchase pushed before it started and one gtag sends after, in both forms', () => {
    const dataLayer: unknown[] = [{ ecommerce: null }, { event: 'purchase', ecommerce: purchase }]
    const { tracker, gtag } = start({ dataLayer })
    gtag('event', 'purchase', { ...purchase, transaction_id: 1002 })
    expect(tracker.events.map((sent) => sent.event)).toEqual(['purchase', 'purchase'])
    expect(tracker.events[0].properties).toEqual({
      order_id: 'T-1001',
      currency: 'EUR',
      // Google's value leaves tax and shipping out; SPEC's revenue is the order's total.
      revenue: 57.86,
      total_tax: 8.46,
      total_shipping: 4.9,
      // 5 off each of two shirts.
      total_discount: 10,
      line_items: [
        { item_id: 'SKU-1', variant_item_id: 'SKU-1', unit_price: 20, quantity: 2 },
        { item_id: 'SKU-2', variant_item_id: 'SKU-2', unit_price: 4.5, quantity: 1 }
      ]
    })
    expect(tracker.events[1].properties.order_id).toBe('1002')
    expect(errors).toEqual([])
  })

  it('tells from the push which of tax and shipping a WooCommerce value already counts, unless told', () => {
    // An order of two lines (2 × 20 + 4.5 = 44.5) with tax 8.46 and shipping 4.9, as the
    // plugins send it: the total (57.86), the total without tax (GTM4WP's option), or Google's form.
    const order = (value: number, id: string) => ({ ...purchase, transaction_id: id, value })
    const { tracker, dataLayer } = start()
    dataLayer.push({ event: 'purchase', ecommerce: order(57.86, 'total') })
    dataLayer.push({ event: 'purchase', ecommerce: order(49.4, 'without-tax') })
    dataLayer.push({ event: 'purchase', ecommerce: order(44.5, 'google') })
    expect(tracker.events.map((sent) => [sent.properties.order_id, sent.properties.revenue])).toEqual([
      ['total', 57.86],
      ['without-tax', 57.86],
      ['google', 57.86]
    ])
    // Told, the bridge does as told, whatever the push says.
    const told = start({ valueIncludesTaxAndShipping: false })
    told.dataLayer.push({ event: 'purchase', ecommerce: order(57.86, 'told') })
    expect(told.tracker.events[0].properties.revenue).toBe(71.22)
    expect(errors).toEqual([])
  })

  it('takes value as the total when told so, and SPEC ids from itemIds()', () => {
    const { tracker, dataLayer } = start({
      valueIncludesTaxAndShipping: true,
      itemIds: (item) => ({ item_id: String(item.item_group_id), variant_item_id: String(item.item_id) })
    })
    dataLayer.push({ event: 'purchase', ecommerce: { ...purchase, items: [{ ...shirt, item_group_id: 'P-1' }] } })
    expect(tracker.events[0].properties).toMatchObject({ revenue: 44.5, line_items: [{ item_id: 'P-1', variant_item_id: 'SKU-1' }] })
  })

  it('reports a malformed push by GA4 event and field, never throws, and delivers the valid pushes after it', () => {
    const { tracker, dataLayer, gtag } = start()
    expect(() => dataLayer.push({ event: 'purchase', ecommerce: { ...purchase, transaction_id: 'T-1000', value: 'lots' } })).not.toThrow()
    dataLayer.push({ event: 'purchase', ecommerce: 'not an object' }, { event: 'purchase', ecommerce: purchase })
    gtag('event', 'purchase', { ...purchase, transaction_id: undefined })
    const hostile = { event: 'purchase', ecommerce: {} }
    Object.defineProperty(hostile.ecommerce, 'transaction_id', {
      get() {
        throw new Error('boom')
      }
    })
    dataLayer.push(hostile)
    expect(errors.map((error) => error.message)).toEqual([
      'discovery-feedback: purchase: value must be a number (or text that reads as one, like "29.90"), got string: the order was sent with the sum of its lines as value',
      'discovery-feedback: purchase: ecommerce must be an object, got string',
      'discovery-feedback: purchase: transaction_id must be a non-empty string or a number, got undefined',
      'discovery-feedback: purchase: could not be read: Error: boom'
    ])
    expect(tracker.events.map((sent) => sent.properties.order_id)).toEqual(['T-1000', 'T-1001'])
  })

  it('sends an order whose tax, shipping or value the page printed wrong without that amount, and reports it', () => {
    const { tracker, dataLayer } = start()
    dataLayer.push({ event: 'purchase', ecommerce: { ...purchase, tax: 'n/a', shipping: '4,90', value: 'see below' } })
    expect(errors.map((error) => [error.event, error.field])).toEqual([
      ['purchase', 'tax'],
      ['purchase', 'shipping'],
      ['purchase', 'value']
    ])
    expect(errors[0].message).toMatch(/tax must be a number .*got string: the order was sent without its tax$/)
    // The lines' sum stands in for value (20 × 2 + 4.50), and nothing for tax and shipping.
    expect(tracker.events[0].properties).toMatchObject({ order_id: 'T-1001', revenue: 44.5, total_discount: 10 })
    expect(tracker.events[0].properties).not.toHaveProperty('total_tax')
    expect(tracker.events[0].properties).not.toHaveProperty('total_shipping')
  })

  it('leaves out an item it cannot map and still sends the order', () => {
    const { tracker, dataLayer } = start()
    dataLayer.push({ event: 'purchase', ecommerce: { ...purchase, items: [shirt, { item_name: 'Gift wrap', price: 2 }, { ...socks, quantity: 1.5 }] } })
    expect(errors.map((error) => [error.event, error.field])).toEqual([
      ['purchase', 'items[1].item_id'],
      ['purchase', 'items[2].quantity']
    ])
    expect(tracker.events[0].properties.line_items).toEqual([{ item_id: 'SKU-1', variant_item_id: 'SKU-1', unit_price: 20, quantity: 2 }])
  })

  it('ignores what is no GA4 event of ours: plain arrays, other events, gtag commands', () => {
    const { tracker, dataLayer, gtag } = start()
    dataLayer.push(['event', 'purchase', purchase], { event: 'gtm.js' }, { event: 'view_item_list', ecommerce: { items: [shirt] } }, 'text', null)
    gtag('config', 'G-XXXX')
    gtag('consent', 'update', { analytics_storage: 'granted' })
    expect(tracker.events).toEqual([])
    expect(errors).toEqual([])
  })

  it('maps select_item to a click-item with the rid of the discovery response that showed the item', () => {
    sessionStorage.setItem('df_rids', JSON.stringify([{ rid: 's-42', item_id: ['SKU-1', 'SKU-9'] }]))
    const { tracker, dataLayer } = start()
    dataLayer.push({ event: 'select_item', ecommerce: { item_list_id: 'search', items: [shirt] } })
    dataLayer.push({ event: 'select_item', ecommerce: { items: [socks] } })
    expect(tracker.events).toEqual([
      { event: 'click-item', properties: { rid: 's-42', item_id: 'SKU-1', variant_item_id: 'SKU-1' } },
      { event: 'click-item', properties: { item_id: 'SKU-2', variant_item_id: 'SKU-2' } }
    ])
  })

  it('finds the rid by the variant id too, when itemIds makes GA4 item_id the variant and the response listed variants', () => {
    sessionStorage.setItem('df_rids', JSON.stringify([{ rid: 's-7', item_id: ['SKU-1'] }]))
    const { tracker, dataLayer } = start({ itemIds: (item) => ({ item_id: String(item.item_group_id), variant_item_id: String(item.item_id) }) })
    dataLayer.push({ event: 'select_item', ecommerce: { items: [{ ...shirt, item_group_id: 'P-1' }] } })
    expect(tracker.events[0].properties).toEqual({ rid: 's-7', item_id: 'P-1', variant_item_id: 'SKU-1' })
  })

  it('keeps the whole cart from view_cart, applies adds and removals to it, and empties it with a purchase', () => {
    const { tracker, dataLayer, gtag } = start()
    dataLayer.push({ event: 'add_to_cart', ecommerce: { items: [socks] } })
    expect(errors[0].message).toMatch(/add_to_cart: items holds only the lines that changed/)
    dataLayer.push({ event: 'view_cart', ecommerce: { currency: 'EUR', value: 40, items: [shirt] } })
    gtag('event', 'add_to_cart', { items: [socks] })
    dataLayer.push({ event: 'add_to_cart', ecommerce: { items: [{ ...socks, quantity: 2 }] } })
    dataLayer.push({ event: 'remove_from_cart', ecommerce: { items: [{ ...shirt, quantity: 2 }] } })
    dataLayer.push({ event: 'purchase', ecommerce: purchase })
    dataLayer.push({ event: 'add_to_cart', ecommerce: { items: [socks] } })
    const carts = tracker.events.filter((sent) => sent.event == 'update-cart').map((sent) => sent.properties.line_items)
    const line = (item: typeof shirt | typeof socks, quantity: number) => ({
      item_id: item.item_id,
      variant_item_id: item.item_id,
      unit_price: Number(item.price),
      quantity
    })
    expect(carts).toEqual([[line(shirt, 2)], [line(shirt, 2), line(socks, 1)], [line(shirt, 2), line(socks, 3)], [line(socks, 3)], [line(socks, 1)]])
    expect(errors).toHaveLength(1)
  })

  it('knows the cart on the next page of the tab, and an empty cart is a cart', () => {
    start().dataLayer.push({ event: 'view_cart', ecommerce: { items: [] } })
    stops.splice(0).forEach((stop) => stop())
    const next = start()
    next.dataLayer.push({ event: 'add_to_cart', ecommerce: { items: [shirt] } })
    expect(next.tracker.events.map((sent) => sent.properties.line_items)).toEqual([
      [{ item_id: 'SKU-1', variant_item_id: 'SKU-1', unit_price: 20, quantity: 2 }]
    ])
  })

  it('makes an in-time view_item the page view-page, and reports one that comes after it', async () => {
    const { tracker, dataLayer } = start()
    dataLayer.push({ event: 'view_item', ecommerce: { items: [shirt] } })
    expect(tracker.events).toEqual([
      { event: 'view-page', properties: expect.objectContaining({ url: location.href, item_id: 'SKU-1', variant_item_id: 'SKU-1' }) }
    ])
    // Pushed again on the same page (a variant chosen, as WooCommerce's found_variation does):
    // the page has its view-page, and this is no fault.
    dataLayer.push({ event: 'view_item', ecommerce: { items: [socks] } })
    expect(errors).toEqual([])
    // A route whose view_item comes one task late: the tracker's automatic view has gone.
    history.pushState(null, '', '/products/socks')
    await nextTask()
    dataLayer.push({ event: 'view_item', ecommerce: { items: [socks] } })
    expect(tracker.events).toHaveLength(1)
    expect(errors.map((error) => error.event)).toEqual(['view_item'])
    // In the same task as the route: in time.
    history.pushState(null, '', '/products/shirt')
    dataLayer.push({ event: 'view_item', ecommerce: { items: [shirt] } })
    expect(tracker.events.map((sent) => sent.properties.url)).toEqual([expect.any(String), location.href])
    history.replaceState(null, '', '/')
  })

  it('with autoViewPage false, sends every view_item as a view-page, once per URL', async () => {
    const { tracker, dataLayer } = start({ autoViewPage: false })
    await nextTask()
    dataLayer.push({ event: 'view_item', ecommerce: { items: [shirt] } }, { event: 'view_item', ecommerce: { items: [shirt] } })
    history.pushState(null, '', '/products/socks')
    await nextTask()
    dataLayer.push({ event: 'view_item', ecommerce: { items: [socks] } })
    expect(tracker.events.map((sent) => sent.properties.item_id)).toEqual(['SKU-1', 'SKU-2'])
    history.replaceState(null, '', '/')
  })

  it('counts a view-page the shop tracked itself through the same tracker', () => {
    const tracker = fakeTracker()
    const dataLayer: unknown[] = []
    stops.push(bridgeDataLayer(tracker, { dataLayer, onError: (error) => errors.push(error) }))
    tracker.track('view-page', { url: location.href, item_id: 'SKU-1', variant_item_id: 'SKU-1' } as never)
    dataLayer.push({ event: 'view_item', ecommerce: { items: [shirt] } })
    expect(tracker.events).toHaveLength(1)
  })

  it('maps only the events asked for', () => {
    const { tracker, dataLayer } = start({ events: ['purchase'] })
    dataLayer.push({ event: 'select_item', ecommerce: { items: [shirt] } }, { event: 'purchase', ecommerce: purchase })
    expect(tracker.events.map((sent) => sent.event)).toEqual(['purchase'])
  })

  it('refuses a second bridge on the same data layer, and stopping restores push', () => {
    const { tracker, dataLayer } = start()
    const stop = bridgeDataLayer(fakeTracker(), { dataLayer, onError: (error) => errors.push(error) })
    expect(errors[0].message).toMatch(/is bridged already/)
    stop()
    stops.splice(0).forEach((each) => each())
    expect(dataLayer.push).toBe(Array.prototype.push)
    dataLayer.push({ event: 'purchase', ecommerce: purchase })
    expect(tracker.events).toEqual([])
  })

  it('creates window.dataLayer when the page has none, and keeps GTM-style push chains working', () => {
    const tracker = fakeTracker()
    stops.push(bridgeDataLayer(tracker))
    expect(Array.isArray(page.dataLayer)).toBe(true)
    const seen: unknown[] = []
    const ours = page.dataLayer!.push
    // A tag manager that loads later wraps push again, chaining to ours.
    page.dataLayer!.push = function (...entries: unknown[]) {
      seen.push(...entries)
      return ours.apply(this, entries)
    }
    page.dataLayer!.push({ event: 'purchase', ecommerce: purchase })
    expect(seen).toHaveLength(1)
    expect(tracker.events).toHaveLength(1)
    expect(page.dataLayer).toHaveLength(1)
  })

  it('reports a page dataLayer that is no array and leaves it alone', () => {
    ;(page as { dataLayer?: unknown }).dataLayer = { push() {} }
    stops.push(bridgeDataLayer(fakeTracker(), { onError: (error) => errors.push(error) }))
    expect(errors[0].message).toBe('discovery-feedback: dataLayer must be an array, got object')
  })

  it('reads GA4 defaults and template output: no quantity is one unit, an empty tax is none, a missing value is the lines', () => {
    const { tracker, dataLayer } = start()
    dataLayer.push({
      event: 'purchase',
      ecommerce: {
        transaction_id: 'T-2',
        currency: 'EUR',
        tax: '',
        shipping: '4.90',
        items: [
          { item_id: 'A', price: '10' },
          { item_id: 'B', price: 5, quantity: null }
        ]
      }
    })
    expect(tracker.events[0].properties).toEqual({
      order_id: 'T-2',
      currency: 'EUR',
      revenue: 19.9,
      total_shipping: 4.9,
      line_items: [
        { item_id: 'A', variant_item_id: 'A', unit_price: 10, quantity: 1 },
        { item_id: 'B', variant_item_id: 'B', unit_price: 5, quantity: 1 }
      ]
    })
    expect(errors).toEqual([])
  })

  it('sends no cart that would leave out an item it could not map, and forgets a cart it could not change', () => {
    const { tracker, dataLayer } = start()
    dataLayer.push({ event: 'view_cart', ecommerce: { items: [shirt, { item_name: 'no id', price: 1 }] } })
    expect(tracker.events).toEqual([])
    expect(errors.map((error) => [error.event, error.field])).toEqual([
      ['view_cart', 'items[1].item_id'],
      ['view_cart', 'items']
    ])
    dataLayer.push({ event: 'view_cart', ecommerce: { items: [shirt] } }, { event: 'add_to_cart', ecommerce: { items: [{ item_id: 'C', price: 'free' }] } })
    dataLayer.push({ event: 'add_to_cart', ecommerce: { items: [socks] } })
    expect(tracker.events.map((sent) => sent.properties.line_items)).toHaveLength(1)
    expect(errors.at(-1)!.message).toMatch(/add_to_cart: items holds only the lines that changed/)
  })

  it('reads pushes made while it reads in the order they came, and a pushing onError cannot make it loop', () => {
    const dataLayer: unknown[] = []
    const order: unknown[] = []
    let reported = 0
    const tracker = {
      use: () => () => {},
      track(event: EventName, properties: Record<string, unknown>) {
        order.push(properties.order_id)
        // A page whose own code pushes again while ours runs.
        if (properties.order_id == 'A') dataLayer.push({ event: 'purchase', ecommerce: { ...purchase, transaction_id: 'C' } })
      }
    }
    stops.push(
      bridgeDataLayer(tracker, {
        dataLayer,
        onError: () => {
          reported++
          dataLayer.push({ event: 'purchase', ecommerce: { ...purchase, transaction_id: '' } })
        }
      })
    )
    dataLayer.push(
      { event: 'purchase', ecommerce: { ...purchase, transaction_id: 'A' } },
      { event: 'purchase', ecommerce: { ...purchase, transaction_id: 'B' } }
    )
    expect(order).toEqual(['A', 'B', 'C'])
    expect(() => dataLayer.push({ event: 'purchase', ecommerce: { ...purchase, transaction_id: '' } })).not.toThrow()
    // The page's push that started the chain, and the 1,000 that its reading brought about.
    expect(reported).toBe(1001)
  })

  it('reports a data layer it cannot follow, a tracker that is none and events it does not know, and throws nothing', () => {
    const frozen = Object.freeze([{ event: 'purchase', ecommerce: purchase }]) as unknown[]
    const report = { onError: (error: FeedbackError) => errors.push(error) }
    expect(() => stops.push(bridgeDataLayer(fakeTracker(), { dataLayer: frozen, ...report }))).not.toThrow()
    expect(() => stops.push(bridgeDataLayer(undefined as never, { dataLayer: [], ...report }))).not.toThrow()
    start({ events: ['purchase', 'select-item' as never] })
    expect(errors.map((error) => [error.field, error.message])).toEqual([
      ['dataLayer', expect.stringMatching(/^discovery-feedback: dataLayer could not be read: TypeError/)],
      ['tracker', 'discovery-feedback: tracker must be a tracker, or an object with its track(), got undefined'],
      ['events', expect.stringMatching(/^discovery-feedback: events lists select-item, which is none of purchase, select_item/)]
    ])
    // The frozen one was not marked as bridged: a later bridge may still try.
    expect(() => bridgeDataLayer(fakeTracker(), { dataLayer: frozen, ...report })).not.toThrow()
  })

  it("names Universal Analytics' form instead of a missing field", () => {
    const { tracker, dataLayer } = start()
    dataLayer.push({ event: 'purchase', ecommerce: { purchase: { actionField: { id: 'T-1', revenue: 10 }, products: [] } } })
    expect(tracker.events).toEqual([])
    expect(errors[0].message).toMatch(/^discovery-feedback: purchase: ecommerce is in Universal Analytics' form/)
  })

  it('of the view_items pushed before it started, takes only the last: earlier routes pushed the others', () => {
    const dataLayer = [
      { event: 'view_item', ecommerce: { items: [shirt] } },
      { event: 'view_item', ecommerce: { items: [socks] } }
    ]
    const { tracker } = start({ dataLayer })
    expect(tracker.events.map((sent) => sent.properties.item_id)).toEqual(['SKU-2'])
  })

  it('on a reloaded page, skips the adds and clicks its HTML pushed again, and still reads new ones', () => {
    sessionStorage.setItem('df_cart', JSON.stringify([{ item_id: 'SKU-1', variant_item_id: 'SKU-1', unit_price: 20, quantity: 1 }]))
    vi.spyOn(performance, 'getEntriesByType').mockReturnValue([{ type: 'reload' } as PerformanceEntry])
    const { tracker, dataLayer } = start({ dataLayer: [{ event: 'add_to_cart', ecommerce: { items: [{ ...shirt, quantity: 1 }] } }] })
    expect(tracker.events).toEqual([])
    dataLayer.push({ event: 'add_to_cart', ecommerce: { items: [{ ...shirt, quantity: 1 }] } })
    expect(tracker.events.map((sent) => sent.properties.line_items)).toEqual([[{ item_id: 'SKU-1', variant_item_id: 'SKU-1', unit_price: 20, quantity: 2 }]])
  })

  it('sends a click or a cart the shop also tracks itself once, whichever comes first, and both when they differ or are apart', () => {
    const clickItem = vi.fn()
    const updateCart = vi.fn()
    const tracker = fakeTracker({ clickItem, updateCart })
    const dataLayer: unknown[] = []
    stops.push(bridgeDataLayer(tracker, { dataLayer }))
    const select = (item: object) => dataLayer.push({ event: 'select_item', ecommerce: { items: [item] } })
    // A declarative tile first (capture phase), then the page's select_item for the same click.
    tracker.clickItem({ item_id: 'SKU-1', variant_item_id: 'SKU-1' })
    select(shirt)
    // The other way round: the tracker's own call is the one dropped.
    select(socks)
    tracker.track('click-item', { item_id: 'SKU-2', variant_item_id: 'SKU-2' })
    // Another item: both.
    tracker.clickItem({ item_id: 'SKU-3', variant_item_id: 'SKU-3' })
    select(shirt)
    expect(clickItem.mock.calls.map(([properties]) => properties.item_id)).toEqual(['SKU-1', 'SKU-3'])
    expect(tracker.events.map((sent) => sent.properties.item_id)).toEqual(['SKU-2', 'SKU-1'])
    // The cart page's own updateCart and its view_cart: one update-cart.
    const now = Date.now()
    vi.spyOn(Date, 'now').mockReturnValue(now + 5000)
    tracker.updateCart({ line_items: [{ item_id: 'SKU-1', variant_item_id: 'SKU-1', unit_price: 20, quantity: 2 }] })
    dataLayer.push({ event: 'view_cart', ecommerce: { items: [shirt] } })
    expect(updateCart).toHaveBeenCalledTimes(1)
    expect(tracker.events.filter((sent) => sent.event == 'update-cart')).toEqual([])
    // Seconds apart, the same item clicked twice: two clicks.
    vi.spyOn(Date, 'now').mockReturnValue(now + 9000)
    tracker.clickItem({ item_id: 'SKU-1', variant_item_id: 'SKU-1' })
    vi.spyOn(Date, 'now').mockReturnValue(now + 12000)
    select(shirt)
    expect(clickItem).toHaveBeenCalledTimes(3)
    expect(tracker.events.filter((sent) => sent.event == 'click-item')).toHaveLength(3)
  })

  it("drops the shop's own view-page of the page whose view-page the bridge sent, and not one of another page", () => {
    const viewPage = vi.fn()
    const tracker = fakeTracker({ viewPage }, { autoViewPage: false })
    const dataLayer: unknown[] = []
    stops.push(bridgeDataLayer(tracker, { dataLayer, autoViewPage: false }))
    dataLayer.push({ event: 'view_item', ecommerce: { items: [shirt] } })
    tracker.viewPage({ item_id: 'SKU-1', variant_item_id: 'SKU-1' })
    expect(viewPage).not.toHaveBeenCalled()
    history.pushState(null, '', '/products/socks')
    tracker.viewPage({ item_id: 'SKU-2', variant_item_id: 'SKU-2' })
    expect(viewPage).toHaveBeenCalledTimes(1)
    expect(tracker.events.map((sent) => sent.event)).toEqual(['view-page'])
    history.replaceState(null, '', '/')
  })

  it('after a back/forward-cache restore, a view_item names the restored page view-page again', async () => {
    const { tracker, dataLayer } = start()
    await nextTask()
    window.dispatchEvent(new PageTransitionEvent('pageshow', { persisted: true }))
    dataLayer.push({ event: 'view_item', ecommerce: { items: [shirt] } })
    expect(tracker.events.map((sent) => sent.event)).toEqual(['view-page'])
  })

  it('keeps the cart in memory when sessionStorage is full, and no older stored cart serves the next page', () => {
    const { tracker, dataLayer } = start()
    dataLayer.push({ event: 'view_cart', ecommerce: { items: [shirt] } })
    vi.spyOn(Storage.prototype, 'setItem').mockImplementation(() => {
      throw new DOMException('full', 'QuotaExceededError')
    })
    dataLayer.push({ event: 'add_to_cart', ecommerce: { items: [socks] } }, { event: 'add_to_cart', ecommerce: { items: [socks] } })
    expect(tracker.events.at(-1)!.properties.line_items).toEqual([
      { item_id: 'SKU-1', variant_item_id: 'SKU-1', unit_price: 20, quantity: 2 },
      { item_id: 'SKU-2', variant_item_id: 'SKU-2', unit_price: 4.5, quantity: 2 }
    ])
    expect(sessionStorage.getItem('df_cart')).toBeNull()
  })
})

describe('bridgeDataLayer, reading the data layer', () => {
  it('reads every entry already there, however many, and each later push', () => {
    const dataLayer: unknown[] = Array.from({ length: 1200 }, (_, index) => ({ event: 'gtm.dom', index }))
    dataLayer.push({ event: 'purchase', ecommerce: purchase })
    const { tracker } = start({ dataLayer })
    expect(tracker.events.map((sent) => sent.event)).toEqual(['purchase'])
  })

  it('reads a single push of more entries than the cap on what a push brings about, whole', () => {
    const { tracker, dataLayer } = start()
    dataLayer.push(...Array.from({ length: 1500 }, () => ({ event: 'gtm.dom' })), { event: 'purchase', ecommerce: purchase })
    expect(tracker.events.map((sent) => sent.event)).toEqual(['purchase'])
  })

  it("reads a tag manager's inner pushes after the push that caused them, when its wrapper was there first", () => {
    const dataLayer: unknown[] = []
    const arrayPush = dataLayer.push
    // A tag manager that wrapped push before us, and whose tag pushes while it handles a push.
    dataLayer.push = function (...entries: unknown[]) {
      const result = arrayPush.apply(this, entries)
      if ((entries[0] as { event?: string }).event == 'purchase') dataLayer.push({ event: 'select_item', ecommerce: { items: [shirt] } })
      return result
    }
    const { tracker } = start({ dataLayer })
    dataLayer.push({ event: 'purchase', ecommerce: purchase })
    expect(tracker.events.map((sent) => sent.event)).toEqual(['purchase', 'click-item'])
  })

  it('stops at once when stopped in the middle of a push, and a new bridge does not read again what the last one read', () => {
    const dataLayer: unknown[] = [{ event: 'select_item', ecommerce: { items: [shirt] } }]
    const first = fakeTracker()
    const stop = bridgeDataLayer(first, { dataLayer, onError: () => stop() })
    dataLayer.push({ event: 'purchase', ecommerce: { ...purchase, value: 'bad' } }, { event: 'purchase', ecommerce: purchase })
    expect(first.events.map((sent) => sent.event)).toEqual(['click-item'])
    // Started again (a component mounted twice): only what came after.
    const { tracker } = start({ dataLayer })
    dataLayer.push({ event: 'select_item', ecommerce: { items: [socks] } })
    expect(tracker.events.map((sent) => sent.properties.item_id)).toEqual(['SKU-2'])
  })
})

describe('bridgeDataLayer on hostile pages', () => {
  it("sums amounts on a page whose Array.prototype.reduce is Prototype.js 1.6's", () => {
    const reduce = Array.prototype.reduce
    // Prototype 1.6's reduce ignores its arguments.
    Array.prototype.reduce = function (this: unknown[]) {
      return this.length > 1 ? this : this[0]
    } as never
    try {
      const { tracker, dataLayer } = start()
      dataLayer.push({ event: 'purchase', ecommerce: { ...purchase, value: undefined } })
      expect(tracker.events[0].properties).toMatchObject({ revenue: 57.86, total_discount: 10 })
    } finally {
      Array.prototype.reduce = reduce
    }
  })

  it('reads a backlog far larger than the call stack could spread', () => {
    const dataLayer: unknown[] = Array.from({ length: 150000 }, () => ({ event: 'gtm.dom' }))
    dataLayer.push({ event: 'purchase', ecommerce: purchase })
    const { tracker } = start({ dataLayer })
    dataLayer.push({ event: 'select_item', ecommerce: { items: [shirt] } })
    expect(tracker.events.map((sent) => sent.event)).toEqual(['purchase', 'click-item'])
    expect(errors).toEqual([])
  })
})

describe('bridgeDataLayer, the cart', () => {
  it('forgets the cart when a whole cart cannot be mapped, so no later add sends a cart without that item', () => {
    const { tracker, dataLayer } = start()
    dataLayer.push({ event: 'view_cart', ecommerce: { items: [shirt] } })
    dataLayer.push({ event: 'view_cart', ecommerce: { items: [shirt, { item_name: 'no id' }, socks] } })
    dataLayer.push({ event: 'add_to_cart', ecommerce: { items: [{ item_id: 'SKU-3', price: 1 }] } })
    expect(tracker.events).toHaveLength(1)
    expect(errors.at(-1)!.message).toMatch(/add_to_cart: items holds only the lines that changed/)
  })

  it('empties the cart after a purchase the bridge does not map, and takes a removal without a price', () => {
    const { tracker, dataLayer } = start({ events: ['view_cart', 'add_to_cart', 'remove_from_cart'] })
    dataLayer.push({ event: 'view_cart', ecommerce: { items: [shirt, socks] } })
    dataLayer.push({ event: 'remove_from_cart', ecommerce: { items: [{ item_id: 'SKU-2', quantity: 1 }] } })
    dataLayer.push({ event: 'purchase', ecommerce: purchase })
    dataLayer.push({ event: 'add_to_cart', ecommerce: { items: [{ ...socks, quantity: 1 }] } })
    expect(
      tracker.events.map((sent) => (sent.properties.line_items as { item_id: string; quantity: number }[]).map((line) => line.item_id + '×' + line.quantity))
    ).toEqual([['SKU-1×2', 'SKU-2×1'], ['SKU-1×2'], ['SKU-2×1']])
  })

  it('stores the cart only while the tracker keeps its uid cookie, and removes it when consent is withdrawn', () => {
    const tracker = fakeTracker({ consent: vi.fn() })
    const dataLayer: unknown[] = []
    stops.push(bridgeDataLayer(tracker, { dataLayer }))
    dataLayer.push({ event: 'view_cart', ecommerce: { items: [shirt] } })
    expect(JSON.parse(sessionStorage.getItem('df_cart')!)).toHaveLength(1)
    tracker.consent('denied')
    expect(sessionStorage.getItem('df_cart')).toBeNull()
    document.cookie = 'df_uid=; path=/; max-age=0'
    dataLayer.push({ event: 'view_cart', ecommerce: { items: [shirt, socks] } })
    expect(sessionStorage.getItem('df_cart')).toBeNull()
    // The page still knows its cart.
    dataLayer.push({ event: 'add_to_cart', ecommerce: { items: [{ ...socks, quantity: 1 }] } })
    expect(tracker.events.at(-1)!.properties.line_items).toHaveLength(2)
  })

  it("keeps the cart it saw before the tracker wrote its cookie (a shopper's first page), and stores it from then on", () => {
    document.cookie = 'df_uid=; path=/; max-age=0'
    const { tracker, dataLayer } = start()
    dataLayer.push({ event: 'view_cart', ecommerce: { items: [shirt] } })
    expect(sessionStorage.getItem('df_cart')).toBeNull()
    // The tracker sends that update-cart and writes its cookie.
    document.cookie = 'df_uid=u-1; path=/'
    dataLayer.push({ event: 'add_to_cart', ecommerce: { items: [socks] } })
    expect(errors).toEqual([])
    expect((tracker.events.at(-1)!.properties.line_items as unknown[]).length).toBe(2)
    expect(JSON.parse(sessionStorage.getItem('df_cart')!)).toHaveLength(2)
  })

  it('drops only the echo of the last cart: a cart that comes back to an earlier state is sent', () => {
    const updateCart = vi.fn()
    const tracker = fakeTracker({ updateCart })
    const dataLayer: unknown[] = []
    stops.push(bridgeDataLayer(tracker, { dataLayer }))
    const shirtLine = { item_id: 'SKU-1', variant_item_id: 'SKU-1', unit_price: 20, quantity: 2 }
    dataLayer.push({ event: 'view_cart', ecommerce: { items: [shirt] } })
    tracker.updateCart({ line_items: [shirtLine] })
    dataLayer.push({ event: 'add_to_cart', ecommerce: { items: [socks] } }, { event: 'remove_from_cart', ecommerce: { items: [socks] } })
    expect(updateCart).not.toHaveBeenCalled()
    expect(tracker.events.map((sent) => (sent.properties.line_items as unknown[]).length)).toEqual([1, 2, 1])
  })

  it('with value left out and valueIncludesTaxAndShipping, the revenue still counts tax and shipping', () => {
    const { tracker, dataLayer } = start({ valueIncludesTaxAndShipping: true })
    dataLayer.push({ event: 'purchase', ecommerce: { ...purchase, value: undefined } })
    expect(tracker.events[0].properties.revenue).toBe(57.86)
  })
})

describe('bridgeDataLayer with the real tracker', () => {
  isolateEachTest()
  afterEach(() => {
    delete page.dataLayer
  })

  const viewPages = () =>
    stored()
      .filter((event) => event.event == 'view-page')
      .map((event) => [new URL((event.properties as { url: string }).url).pathname, (event.properties as { item_id?: string }).item_id])

  it('gives the view_item pushed before it the page first view-page, and the tracker sends no second one', () => {
    page.dataLayer = [{ event: 'view_item', ecommerce: { items: [shirt] } }]
    const tracker = make({ autoViewPage: true })
    stops.push(bridgeDataLayer(tracker))
    vi.advanceTimersByTime(100)
    history.pushState(null, '', '/products/socks')
    vi.advanceTimersByTime(100)
    // Late for this route: its view-page went without it.
    page.dataLayer.push({ event: 'view_item', ecommerce: { items: [socks] } })
    vi.advanceTimersByTime(100)
    expect(viewPages()).toEqual([
      ['/', 'SKU-1'],
      ['/products/socks', undefined]
    ])
  })

  it('hears a view-page the page tracked itself, and does not add the bridge one', () => {
    const tracker = make({ autoViewPage: true })
    stops.push(bridgeDataLayer(tracker))
    history.pushState(null, '', '/products/shirt')
    tracker.viewPage({ item_id: 'SKU-1', variant_item_id: 'SKU-1' })
    window.dataLayer!.push({ event: 'view_item', ecommerce: { items: [shirt] } })
    vi.advanceTimersByTime(100)
    expect(viewPages()).toEqual([['/products/shirt', 'SKU-1']])
  })

  it('counts the view the tracker recorded when the page was hidden before its task, and sends no second one', () => {
    const tracker = make({ autoViewPage: true })
    stops.push(bridgeDataLayer(tracker))
    setVisibility('hidden')
    setVisibility('visible')
    window.dataLayer!.push({ event: 'view_item', ecommerce: { items: [shirt] } })
    vi.advanceTimersByTime(100)
    expect(viewPages()).toEqual([['/', undefined]])
  })

  it('lets a click the tracker refuses (a tile without its variant id) keep no select_item from going', () => {
    quietConsole()
    const tracker = make()
    stops.push(bridgeDataLayer(tracker))
    tracker.clickItem({ item_id: 'SKU-2' } as never)
    window.dataLayer!.push({ event: 'select_item', ecommerce: { items: [socks] } })
    expect(tracker.stats().dropped.invalid).toBe(1)
    expect(stored().map((event) => [event.event, event.properties])).toEqual([['click-item', { item_id: 'SKU-2', variant_item_id: 'SKU-2' }]])
  })

  it("drops the shop's own viewPage() of the page whose view-page the bridge sent, as the tracker would skip its own", () => {
    const tracker = make({ autoViewPage: false })
    stops.push(bridgeDataLayer(tracker, { autoViewPage: false }))
    history.pushState(null, '', '/products/shirt')
    window.dataLayer!.push({ event: 'view_item', ecommerce: { items: [shirt] } })
    tracker.viewPage({ item_id: 'SKU-1', variant_item_id: 'SKU-1' })
    history.pushState(null, '', '/products/socks')
    tracker.viewPage({ item_id: 'SKU-2', variant_item_id: 'SKU-2' })
    expect(viewPages()).toEqual([
      ['/products/shirt', 'SKU-1'],
      ['/products/socks', 'SKU-2']
    ])
  })

  it("lets nothing the bridge's listening throws reach the shop's own call", () => {
    quietConsole()
    const tracker = make()
    stops.push(bridgeDataLayer(tracker))
    const circular: Record<string, unknown> = {}
    circular.self = circular
    expect(() => tracker.updateCart({ line_items: [circular] } as never)).not.toThrow()
    expect(() => tracker.updateCart({ line_items: [{ item_id: 'A', variant_item_id: 'A', unit_price: 1, quantity: BigInt(1) }] } as never)).not.toThrow()
    expect(tracker.stats().dropped.invalid).toBe(2)
  })
})
