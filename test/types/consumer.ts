// A consumer of all three entries, compiled by test/types.test.ts as ESM (.mts), CommonJS (.cts)
// and plain .ts under nodenext, node10 and bundler. Each @ts-expect-error marks a call that
// must stay a type error: the test fails if it compiles.
import { createTracker, EVENTS, validate } from 'discovery-feedback'
import type { CommandFunction, Envelope, FeedbackError, LineItem, Tracker } from 'discovery-feedback'
import { createClient, createRecommendations } from 'discovery-feedback/client'
import type { DiscoveryError, LinkedTracker, RecommendationState } from 'discovery-feedback/client'
import { createServerTracker, identityCookie } from 'discovery-feedback/server'
import type { ServerUser } from 'discovery-feedback/server'

const line: LineItem = { item_id: 'a', variant_item_id: 'a-1', unit_price: 9.9, quantity: 1 }
const tracker: Tracker = createTracker({ key: 'KEY', endpoint: 'https://collector.example/v3/feedback', onError: (error: FeedbackError) => error.field })
tracker.purchase({ order_id: 'o-1', currency: 'EUR', revenue: 9.9, line_items: [line] })
tracker.clickItem({ item_id: 'a', variant_item_id: 'a-1' })
tracker.track('view-page', { url: 'https://shop.example/', ref: '', width: 1, height: 1 })
// @ts-expect-error revenue is a number
tracker.purchase({ order_id: 'o-1', currency: 'EUR', revenue: '12', line_items: [] })
// @ts-expect-error click-item needs item_id
tracker.clickItem({ variant_item_id: 'a-1' })
// @ts-expect-error an unknown event name
tracker.track('click-everything', {})
// @ts-expect-error click-suggestion needs its rid when no client fills it in
tracker.clickSuggestion({ suggestion: 'shirt' })

declare const discoveryFeedback: CommandFunction
discoveryFeedback('click-item', { item_id: 'a', variant_item_id: 'a-1' })
discoveryFeedback('consent', 'granted')
// @ts-expect-error an unknown event name in the script-tag command function
discoveryFeedback('click-everything', {})
// @ts-expect-error revenue is a number there too
discoveryFeedback('purchase', { order_id: 'o-1', currency: 'EUR', revenue: '12', line_items: [] })

const names: string[] = Object.keys(EVENTS)
const checked: unknown = validate('click-item', { item_id: 'a', variant_item_id: 'a-1' })
const wire: Envelope<'click-item'>['properties'] = { item_id: 'a', variant_item_id: 'a-1' }

const discovery = createClient({ key: 'KEY', baseUrl: 'https://discovery.example', tracker })
const linked: LinkedTracker = discovery.tracker
linked.clickSuggestion({ suggestion: 'shirt' })
linked.addToCart({ item_id: 'a', variant_item_id: 'a-1', quantity: 1 })
discovery.autocomplete({ q: 'shirt' }).then(
  (answer) => answer.suggestions[0]?.value,
  (error: DiscoveryError) => error.kind
)
// @ts-expect-error autocomplete needs q
discovery.autocomplete({})

const shelf = createRecommendations(discovery, { trendingSlot: 'hot' }).emit('viewed', { item_id: 'a' }).emit({ name: 'featured' })
const state: RecommendationState = shelf.getState()
const stop: () => void = shelf.subscribe(() => state.items[0]?.title)
// @ts-expect-error viewed needs item_id
shelf.emit('viewed')
// @ts-expect-error an unknown store event
shelf.emit('similar')

const feedback = createServerTracker({ key: 'KEY', endpoint: 'https://collector.example/v3/feedback' })
const shopper: ServerUser = { uid: 'u', sid: 's', ip: '203.0.113.9', ua: 'Mozilla/5.0' }
feedback.track('purchase', { order_id: 'o-1', currency: 'EUR', revenue: 9.9, line_items: [line] }, shopper)
// @ts-expect-error ip and ua are required on the server, as it throws without them
feedback.track('click-item', { item_id: 'a', variant_item_id: 'a-1' }, { uid: 'u', sid: 's' })
const { uid, setCookie } = identityCookie(undefined, { domain: 'shop.example' })

export const used = [names, checked, wire, stop, uid, setCookie, feedback.close()]

// An app pixel (a Web Pixels extension): Shopify's own register hands connectShopify its Standard API.
import { register } from '@shopify/web-pixels-extension'
import { connectShopify } from 'discovery-feedback/shopify'
import type { ShopifyConnection, ShopifyOptions } from 'discovery-feedback/shopify'

register((api) => {
  const options: ShopifyOptions = {
    key: 'KEY',
    endpoint: 'https://collector.example/v3/feedback',
    cookieDomain: 'auto',
    itemIds: (variant) => ({ item_id: variant.product.id ?? '', variant_item_id: variant.sku ?? '' })
  }
  const connection: ShopifyConnection = connectShopify(api, options)
  connection.flush().then(() => connection.stats().dropped.invalid)
  // @ts-expect-error pages is 'checkout' or 'all'
  connectShopify(api, { ...options, pages: 'some' })
  // @ts-expect-error the API is Shopify's, not any object
  connectShopify({ analytics: {} }, options)
})
