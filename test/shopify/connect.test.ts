// @vitest-environment node
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { connectShopify, type ShopifyOptions } from '../../src/shopify'
import { validate, type Envelope, type FeedbackError } from '../../src/index'
import { orderEventId } from '../../src/shared/order-event-id'
import { sleep, waitFor } from '../support/wait'
import { checkoutCompleted, checkoutStarted, consent, pageViewed, sampleOrder } from './events'
import { CHECKOUT_URL, fakeApi } from './fake-api'

const ENDPOINT = 'https://collector.example/v3/feedback'
const UID = 'V1StGXR8_Z5jdHi6B-myT'
const SID = 'sid_storefront_0001'

interface Sent {
  url: string
  events: Envelope[]
  keepalive: boolean | undefined
}

let sent: Sent[]
let status: number
let errors: FeedbackError[]

beforeEach(() => {
  sent = []
  status = 200
  errors = []
  vi.spyOn(console, 'error').mockImplementation(() => {})
  vi.stubGlobal('fetch', async (url: string, init: RequestInit) => {
    sent.push({ url, events: JSON.parse(init.body as string), keepalive: init.keepalive })
    return new Response('{}', { status })
  })
})
afterEach(() => {
  vi.unstubAllGlobals()
  vi.restoreAllMocks()
})

const delivered = () => (status < 300 ? sent.flatMap((request) => request.events) : [])
const options = (more: Partial<ShopifyOptions> = {}): ShopifyOptions => ({ key: 'KEY', endpoint: ENDPOINT, onError: (error) => errors.push(error), ...more })

describe('connectShopify: checkout_completed', () => {
  it('sends the purchase at once, by fetch with keepalive, with the storefront uid and sid, valid by SPEC', async () => {
    const shop = fakeApi({ cookies: { df_uid: UID, df_sid: SID } })
    connectShopify(shop.api, options())
    shop.publish('checkout_completed', checkoutCompleted(sampleOrder()))
    // Not held for the batch interval (1 s).
    await waitFor(() => sent.length == 1, 'the purchase', 500)
    const [purchase] = sent[0].events
    expect(sent[0].keepalive).toBe(true)
    expect(sent[0].url).toMatch(/^https:\/\/collector\.example\/v3\/feedback\?t_sent=\d+$/)
    expect(purchase.event).toBe('purchase')
    expect(purchase.user).toMatchObject({ uid: UID, sid: SID, lang: ['en-US', 'en'] })
    expect(purchase.user.ua).toContain('Chrome/')
    expect(purchase.properties).toEqual({
      order_id: '5512345678901',
      currency: 'EUR',
      revenue: 143.7,
      total_tax: 22.94,
      total_shipping: 4.9,
      total_discount: 0,
      line_items: [
        { item_id: '7234567890123', variant_item_id: '42123456789012', unit_price: 39.9, quantity: 2 },
        { item_id: '7234567890456', variant_item_id: '42123456789345', unit_price: 59, quantity: 1 }
      ]
    })
    expect(validate('purchase', purchase.properties)).toEqual(purchase.properties)
    expect(purchase.event_id).toBe(orderEventId('KEY', '5512345678901'))
    expect(errors).toEqual([])
  })

  it('continues the storefront sid with the storefront cookie attributes, and makes ids the storefront will continue when there were none', async () => {
    const known = fakeApi({ cookies: { df_uid: UID, df_sid: SID } })
    connectShopify(known.api, options({ cookieDomain: 'demo-store.example' }))
    known.publish('checkout_completed', checkoutCompleted(sampleOrder()))
    await waitFor(() => sent.length == 1, 'the purchase')
    expect(known.cookieWrites).toEqual([
      `df_uid=${UID}; path=/; max-age=34560000; SameSite=Lax; Secure; domain=demo-store.example`,
      `df_sid=${SID}; path=/; max-age=1800; SameSite=Lax; Secure; domain=demo-store.example`
    ])

    const stranger = fakeApi()
    connectShopify(stranger.api, options({ sessionMinutes: 45 }))
    stranger.publish('checkout_completed', checkoutCompleted(sampleOrder({ id: 'gid://shopify/OrderIdentity/2' })))
    await waitFor(() => sent.length == 2, 'the second purchase')
    const { uid, sid } = sent[1].events[0].user
    expect(stranger.jar.get('df_uid')).toBe(uid)
    expect(stranger.jar.get('df_sid')).toBe(sid)
    expect(uid).toMatch(/^[\w-]{21}$/)
    expect(stranger.cookieWrites[1]).toBe(`df_sid=${sid}; path=/; max-age=2700; SameSite=Lax; Secure`)
  })

  it('reports a line without a product by the Shopify event and field, and still sends the purchase with the others', async () => {
    const shop = fakeApi()
    connectShopify(shop.api, options())
    const data = checkoutCompleted(sampleOrder())
    data.checkout.lineItems[0] = { ...data.checkout.lineItems[0], variant: null }
    shop.publish('checkout_completed', data)
    await waitFor(() => sent.length == 1, 'the purchase')
    expect(sent[0].events[0].properties.line_items).toHaveLength(1)
    expect(errors.map((error) => [error.event, error.field])).toEqual([['checkout_completed', 'checkout.lineItems[0]']])
  })

  it('reports a checkout without an order by name, and sends nothing for it, without throwing into Shopify', async () => {
    const shop = fakeApi()
    const connection = connectShopify(shop.api, options())
    const data = checkoutCompleted(sampleOrder())
    data.checkout.order = null
    expect(() => shop.publish('checkout_completed', data)).not.toThrow()
    await connection.flush()
    expect(sent).toEqual([])
    expect(errors[0].message).toBe('discovery-feedback: checkout_completed: checkout.order.id is required: a purchase needs its order')
    expect(connection.stats().dropped.invalid).toBe(1)
  })

  it('keys the catalogue otherwise with itemIds, e.g. by SKU', async () => {
    const shop = fakeApi()
    connectShopify(shop.api, options({ itemIds: (variant) => ({ item_id: variant.sku!.split('-')[0], variant_item_id: variant.sku! }) }))
    shop.publish('checkout_completed', checkoutCompleted(sampleOrder()))
    await waitFor(() => sent.length == 1, 'the purchase')
    expect(sent[0].events[0].properties.line_items.map((line: { item_id: string; variant_item_id: string }) => [line.item_id, line.variant_item_id])).toEqual([
      ['LS', 'LS-M'],
      ['CS', 'CS-42']
    ])
  })
})

describe('connectShopify: pages and carts', () => {
  it('sends view-page for checkout pages only, with the URL from the event context; storefront pages are the script tag’s', async () => {
    const shop = fakeApi()
    const connection = connectShopify(shop.api, options())
    shop.publish('page_viewed', pageViewed(), 'https://demo-store.example/products/linen-shirt')
    shop.publish('page_viewed', pageViewed(), CHECKOUT_URL)
    await connection.flush()
    const views = delivered()
    expect(views.map((event) => event.properties)).toEqual([{ url: CHECKOUT_URL, ref: '', width: 1280, height: 800 }])
  })

  it("sends every page with pages: 'all', for a shop without the script tag", async () => {
    const shop = fakeApi()
    const connection = connectShopify(shop.api, options({ pages: 'all' }))
    shop.publish('page_viewed', pageViewed(), 'https://demo-store.example/products/linen-shirt')
    shop.publish('page_viewed', pageViewed(), CHECKOUT_URL)
    await connection.flush()
    expect(delivered().map((event) => event.properties.url)).toEqual(['https://demo-store.example/products/linen-shirt', CHECKOUT_URL])
  })

  it('sends update-cart when the lines change inside the checkout, not for the cart it started with', async () => {
    const shop = fakeApi()
    const connection = connectShopify(shop.api, options())
    const order = sampleOrder()
    shop.publish('checkout_started', checkoutStarted(order))
    shop.publish('checkout_contact_info_submitted', checkoutStarted(order))
    const fewer = { ...order, lines: [{ ...order.lines[0], quantity: 1 }] }
    shop.publish('checkout_shipping_info_submitted', checkoutStarted(fewer))
    await connection.flush()
    expect(delivered().map((event) => [event.event, event.properties])).toEqual([
      ['update-cart', { line_items: [{ item_id: '7234567890123', variant_item_id: '42123456789012', unit_price: 39.9, quantity: 1 }] }]
    ])
  })
})

describe('connectShopify: consent', () => {
  it('sends nothing and writes no cookie until consent is collected, then sends what waited', async () => {
    const shop = fakeApi({ customerPrivacy: consent(false) })
    connectShopify(shop.api, options())
    shop.publish('page_viewed', pageViewed())
    shop.publish('checkout_completed', checkoutCompleted(sampleOrder()))
    await sleep(1200)
    expect(sent).toEqual([])
    expect(shop.cookieWrites).toEqual([])
    expect(shop.stored.size).toBe(0)
    shop.collectConsent(true)
    await waitFor(() => delivered().length == 2, 'both events')
    expect(delivered().map((event) => event.event)).toEqual(['view-page', 'purchase'])
    expect(shop.jar.get('df_uid')).toBe(delivered()[0].user.uid)
  })

  it('sends nothing, stores nothing and deletes our cookies when the visitor declines', async () => {
    const shop = fakeApi({ customerPrivacy: consent(false), cookies: { df_uid: UID, df_sid: SID, theme: 'dark' } })
    const connection = connectShopify(shop.api, options())
    shop.publish('checkout_completed', checkoutCompleted(sampleOrder()))
    shop.collectConsent(false)
    shop.publish('page_viewed', pageViewed())
    await connection.flush()
    await sleep(1200)
    expect(sent).toEqual([])
    expect([...shop.jar.keys()]).toEqual(['theme'])
    expect(shop.cookieWrites.every((write) => /max-age=0/.test(write))).toBe(true)
    expect(connection.stats().queued).toBe(0)
  })

  it('honours Global Privacy Control as the storefront does, unless told otherwise', async () => {
    vi.stubGlobal('navigator', { globalPrivacyControl: true })
    const shop = fakeApi()
    const connection = connectShopify(shop.api, options())
    shop.publish('checkout_completed', checkoutCompleted(sampleOrder()))
    await connection.flush()
    expect(sent).toEqual([])
    const ignoring = fakeApi()
    connectShopify(ignoring.api, options({ ignoreGlobalPrivacyControl: true }))
    ignoring.publish('checkout_completed', checkoutCompleted(sampleOrder()))
    await waitFor(() => sent.length == 1, 'the purchase')
  })
})

describe('connectShopify: delivery', () => {
  it('keeps an unsent purchase in the shop’s storage through the Standard API, and the next page sends it once', async () => {
    status = 503
    const stored = new Map<string, string>()
    const first = fakeApi({ stored })
    connectShopify(first.api, options())
    first.publish('checkout_completed', checkoutCompleted(sampleOrder()))
    await waitFor(() => sent.length == 1, 'the first try')
    expect([...stored.keys()]).toEqual(['df_pixel_' + orderEventId('KEY', '5512345678901')])

    // The thank-you page is gone; the shopper's next page runs the pixel again.
    status = 200
    sent = []
    const next = fakeApi({ stored, href: 'https://demo-store.example/' })
    connectShopify(next.api, options())
    await waitFor(() => sent.length == 1, 'the kept purchase')
    expect(sent[0].events.map((event) => event.event_id)).toEqual([orderEventId('KEY', '5512345678901')])
    await waitFor(() => stored.size == 0, 'the storage emptied')
  })

  it('reports options it cannot work with and does nothing, without throwing', async () => {
    const shop = fakeApi()
    const connection = connectShopify(shop.api, options({ endpoint: '/v3/feedback' }))
    shop.publish('checkout_completed', checkoutCompleted(sampleOrder()))
    await connection.flush()
    expect(sent).toEqual([])
    expect(errors.map((error) => error.field)).toEqual(['options.endpoint'])
    expect(() => connectShopify(shop.api, { key: '' } as ShopifyOptions)).not.toThrow()
  })
})
