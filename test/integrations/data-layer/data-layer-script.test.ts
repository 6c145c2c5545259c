import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { quietConsole } from '../../support/console'
import { ENDPOINT, network, resetPage } from '../../support/helpers'
import { clickBothWays, command, loadTracker, ONE_CLICK_AND_THE_VIEW, page, sent, shirt } from './script-tag-page'
import { installStub, runScriptTag } from '../../support/script-tags'

// The bridge's script tag (src/script-tags/data-layer.ts) with the tracker's, run as a page runs
// them: the README's stub, the add-on and the tracker's file in either order, calls through
// `discoveryFeedback(…)`. What reached the network is asserted.

beforeEach(() => {
  resetPage()
  delete page.discoveryFeedback
  delete page.discoveryFeedbackDataLayer
  delete page.dataLayer
  vi.useFakeTimers()
  quietConsole()
})
afterEach(() => {
  page.discoveryFeedback?.tracker?.destroy()
  delete page.discoveryFeedback
  delete page.discoveryFeedbackDataLayer
  delete page.dataLayer
  vi.useRealTimers()
  vi.restoreAllMocks()
})

describe('the data-layer script tag', () => {
  it('before the tracker: its view-page, queued, names the page view; a click the page also tracked goes once', async () => {
    const net = network()
    installStub()
    page.dataLayer = [{ event: 'view_item', ecommerce: { items: [shirt] } }]
    await runScriptTag('data-layer')
    // The same click, through the bridge and through the page's own call, both before the tracker loads.
    page.dataLayer.push({ event: 'select_item', ecommerce: { items: [shirt] } })
    command()('click-item', { item_id: 'SKU-1', variant_item_id: 'SKU-1' })
    await loadTracker()
    expect(await sent(net)).toEqual([
      ['view-page', 'SKU-1'],
      ['click-item', 'SKU-1']
    ])
  })

  it("after the tracker: hears the page's own calls from the moment the tracker exists", async () => {
    const net = network()
    installStub()
    await runScriptTag('data-layer')
    await loadTracker()
    // Nothing of the bridge's has gone through the tracker yet: the page's calls come first.
    command()('view-page', { item_id: 'SKU-1', variant_item_id: 'SKU-1' })
    command()('click-item', { item_id: 'SKU-1', variant_item_id: 'SKU-1' })
    page.dataLayer!.push({ event: 'view_item', ecommerce: { items: [shirt] } }, { event: 'select_item', ecommerce: { items: [shirt] } })
    expect(await sent(net)).toEqual([
      ['view-page', 'SKU-1'],
      ['click-item', 'SKU-1']
    ])
  })

  it("before the tracker: the page's own view-page, queued before the add-on's, wins, and the late view_item is reported", async () => {
    const net = network()
    const errors = quietConsole()
    installStub()
    command()('view-page', {})
    page.dataLayer = [{ event: 'view_item', ecommerce: { items: [shirt] } }]
    await runScriptTag('data-layer')
    await loadTracker()
    expect(await sent(net)).toEqual([['view-page', undefined]])
    expect(errors.mock.calls.map(([message]) => message)).toEqual([
      expect.stringMatching(/^discovery-feedback: view_item: came after this page's view-page was tracked/)
    ])
  })

  it('with a tracker that waits for init: its view-page queued once, though view_item is pushed twice', async () => {
    const net = network()
    installStub()
    await runScriptTag('data-layer')
    await runScriptTag('tracker')
    page.dataLayer!.push({ event: 'view_item', ecommerce: { items: [shirt] } }, { event: 'view_item', ecommerce: { items: [{ ...shirt, item_id: 'SKU-1b' }] } })
    command()('init', { key: 'KEY', endpoint: ENDPOINT })
    expect(await sent(net)).toEqual([['view-page', 'SKU-1']])
  })

  it('takes its options from its data-* attributes, a bare one as true', async () => {
    const net = network()
    installStub()
    page.dataLayer = []
    const shopLayer = [
      { event: 'purchase', ecommerce: { transaction_id: 'T-1', currency: 'EUR', value: 10, tax: 2, items: [shirt] } },
      { event: 'select_item', ecommerce: { items: [shirt] } }
    ]
    ;(window as unknown as Record<string, unknown>).shopLayer = shopLayer
    await runScriptTag('data-layer', { dataLayer: 'shopLayer', valueIncludesTaxAndShipping: '', events: 'purchase, view_item', autoViewPage: 'false' })
    await runScriptTag('tracker', { key: 'KEY', endpoint: ENDPOINT, autoViewPage: 'false' })
    // Past the moment a tracker with automatic view-pages would have viewed the page: to an add-on
    // that ignored its data-auto-view-page, this view_item would come too late and be reported,
    // not sent.
    vi.advanceTimersByTime(50)
    shopLayer.push({ event: 'view_item', ecommerce: { items: [shirt] } })
    await command().tracker!.flush()
    expect(
      net.events().map((event) => {
        const properties = event.properties as { revenue?: number; item_id?: string }
        return [event.event, properties.revenue ?? properties.item_id]
      })
    ).toEqual([
      ['purchase', 10],
      ['view-page', 'SKU-1']
    ])
    delete (window as unknown as Record<string, unknown>).shopLayer
  })

  it("hears the page's calls with the add-on first and the README's stub after it, which assigns the name again", async () => {
    const net = network()
    await runScriptTag('data-layer')
    installStub()
    await loadTracker()
    expect(await clickBothWays(net)).toEqual(ONE_CLICK_AND_THE_VIEW)
  })

  it('counts the echo window from the moment a queued event reaches the tracker, not from when it was queued', async () => {
    const net = network()
    installStub()
    await runScriptTag('data-layer')
    const line = { item_id: 'SKU-1', variant_item_id: 'SKU-1', unit_price: 20, quantity: 1 }
    page.dataLayer!.push({ event: 'view_cart', ecommerce: { items: [shirt] } })
    // The cart page's own call, its fields in another order.
    command()('update-cart', { line_items: [{ quantity: 1, unit_price: 20, variant_item_id: 'SKU-1', item_id: 'SKU-1' }] })
    // A slow network: the tracker arrives seconds later.
    vi.advanceTimersByTime(2500)
    await loadTracker()
    expect(await sent(net)).toEqual([
      ['update-cart', undefined],
      ['view-page', undefined]
    ])
    expect(net.events()[0].properties).toEqual({ line_items: [line] })
  })

  it('takes calls on a stub the page froze', async () => {
    const net = network()
    await runScriptTag('data-layer')
    Object.freeze(page.discoveryFeedback)
    expect(() => command()('click-item', { item_id: 'SKU-1', variant_item_id: 'SKU-1' })).not.toThrow()
    await loadTracker()
    expect(await sent(net)).toEqual([
      ['click-item', 'SKU-1'],
      ['view-page', undefined]
    ])
  })
})
