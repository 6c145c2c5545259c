import { afterEach, beforeEach, expect, it, vi } from 'vitest'
import { bridgeDataLayer } from '../../../src/integrations/data-layer/bridge'
import { recordingTracker } from './recording-tracker'

// A page loaded again from history, as a browser does when the back/forward cache could not keep
// it: its HTML pushes its GA4 events a second time, as on a reload. The reload itself is covered
// in data-layer.test.ts; this file has the history case on its own.

/** A tracker that checks each event by SPEC's rules and records it, and keeps the add-on contract. */
const fakeTracker = () => recordingTracker({}, { autoViewPage: false })

const line = { item_id: 'SKU-1', variant_item_id: 'SKU-1', unit_price: 20 }
const addShirt = { event: 'add_to_cart', ecommerce: { items: [{ item_id: 'SKU-1', item_name: 'Shirt', price: 20, quantity: 1 }] } }
let stop: (() => void) | undefined

beforeEach(() => {
  sessionStorage.clear()
  // The tracker's uid cookie: with it, the bridge keeps the cart from page to page.
  document.cookie = 'df_uid=u-1; path=/'
  vi.spyOn(console, 'error').mockImplementation(() => {})
})
afterEach(() => {
  stop?.()
  stop = undefined
  document.cookie = 'df_uid=; path=/; max-age=0'
  vi.restoreAllMocks()
})

it('on a page loaded again from history, skips the add its HTML pushed again, and sends a new one', () => {
  // The first visit to this page added the shirt; the cart was stored when the shopper left it.
  sessionStorage.setItem('df_cart', JSON.stringify([{ ...line, quantity: 1 }]))
  vi.spyOn(performance, 'getEntriesByType').mockReturnValue([{ type: 'back_forward' } as PerformanceEntry])
  const tracker = fakeTracker()
  const dataLayer: unknown[] = [addShirt]
  stop = bridgeDataLayer(tracker, { dataLayer, onError: () => {} })
  // Counted once already on the first visit: sending it again would make two shirts of one.
  expect(tracker.events).toEqual([])
  // The shopper adds the shirt again on the page now.
  dataLayer.push(addShirt)
  expect(tracker.events.map((sent) => [sent.event, sent.properties.line_items])).toEqual([['update-cart', [{ ...line, quantity: 2 }]]])
})
