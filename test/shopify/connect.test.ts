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
let retryAfter: string
let errors: FeedbackError[]

beforeEach(() => {
  sent = []
  status = 200
  retryAfter = '0'
  errors = []
  vi.spyOn(console, 'error').mockImplementation(() => {})
  vi.stubGlobal('fetch', async (url: string, init: RequestInit) => {
    sent.push({ url, events: JSON.parse(init.body as string), keepalive: init.keepalive })
    return new Response('{}', { status, headers: { 'retry-after': retryAfter } })
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
    // The collector is down while the thank-you page is open; the page goes before its retry.
    status = 503
    retryAfter = '3600'
    const stored = new Map<string, string>()
    const first = fakeApi({ stored })
    connectShopify(first.api, options())
    first.publish('checkout_completed', checkoutCompleted(sampleOrder()))
    await waitFor(() => sent.length == 1, 'the first try')
    const id = orderEventId('KEY', '5512345678901')
    await waitFor(() => stored.size == 1, 'the kept purchase')
    expect([...stored.keys()][0]).toMatch(new RegExp('^df_pixel_[0-9a-z]+_' + id.replace('.', '\\.') + '$'))

    // The shopper's next page of the shop runs the pixel again.
    status = 200
    sent = []
    const next = fakeApi({ stored, href: 'https://demo-store.example/' })
    connectShopify(next.api, options())
    await waitFor(() => sent.length == 1, 'the kept purchase')
    await waitFor(() => stored.size == 0, 'the storage emptied')
    await sleep(1200)
    expect(sent.flatMap((request) => request.events.map((event) => event.event_id))).toEqual([id])
  })

  it('sends a kept purchase up to 7 days old; an older one it deletes unsent, as the storefront outbox does', async () => {
    status = 503
    retryAfter = '3600'
    const stored = new Map<string, string>()
    const first = fakeApi({ stored })
    connectShopify(first.api, options())
    for (const order of ['1001', '1002']) first.publish('checkout_completed', checkoutCompleted(sampleOrder({ id: 'gid://shopify/OrderIdentity/' + order })))
    await waitFor(() => stored.size == 2, 'the two kept purchases')
    // The shopper comes back a week later: one purchase was kept a minute less than 7 days ago,
    // the other a minute more.
    const DAY = 864e5
    const age = { [orderEventId('KEY', '1001')]: 7 * DAY - 60000, [orderEventId('KEY', '1002')]: 7 * DAY + 60000 }
    for (const [name, text] of stored) {
      const event = JSON.parse(text)
      stored.set(name, JSON.stringify({ ...event, t_client: Date.now() - age[event.event_id] }))
    }
    status = 200
    sent = []
    const next = fakeApi({ stored, href: 'https://demo-store.example/' })
    const connection = connectShopify(next.api, options())
    await waitFor(() => stored.size == 0, 'the storage emptied')
    await connection.flush()
    expect(sent.flatMap((request) => request.events.map((event) => event.event_id))).toEqual([orderEventId('KEY', '1001')])
  })

  it('takes over no kept event of another key or collector (a staging pixel beside the live one)', async () => {
    status = 503
    retryAfter = '3600'
    const stored = new Map<string, string>()
    const staging = fakeApi({ stored })
    connectShopify(staging.api, options({ key: 'STAGING' }))
    staging.publish('checkout_completed', checkoutCompleted(sampleOrder()))
    await waitFor(() => stored.size == 1, 'the kept purchase')
    status = 200
    sent = []
    const live = fakeApi({ stored })
    const connection = connectShopify(live.api, options())
    await sleep(100)
    await connection.flush()
    expect(sent).toEqual([])
    expect(stored.size).toBe(1)
  })

  it('keeps at most two requests in flight; after a failure, one probe carries what waits', async () => {
    const shop = fakeApi()
    const answers: ((response: Response) => void)[] = []
    vi.stubGlobal('fetch', (url: string, init: RequestInit) => {
      sent.push({ url, events: JSON.parse(init.body as string), keepalive: init.keepalive })
      return new Promise<Response>((resolve) => answers.push(resolve))
    })
    connectShopify(shop.api, options())
    for (let order = 1; order <= 4; order++) {
      shop.publish('checkout_completed', checkoutCompleted(sampleOrder({ id: 'gid://shopify/OrderIdentity/' + order })))
      await sleep(30)
    }
    expect(sent).toHaveLength(2)
    // Both fail: what waits goes in one request, a probe, and nothing more until it is answered.
    answers.splice(0).forEach((answer) => answer(new Response('{}', { status: 503, headers: { 'retry-after': '0' } })))
    await waitFor(() => sent.length == 3, 'the probe')
    await sleep(100)
    expect(sent).toHaveLength(3)
    expect(sent[2].events.map((event) => event.properties.order_id)).toEqual(['1', '2', '3', '4'])
    answers.splice(0).forEach((answer) => answer(new Response('{}', { status: 200 })))
    await sleep(100)
    expect(sent).toHaveLength(3)
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

describe('connectShopify: what the top frame or the data may do wrong', () => {
  it('sends the purchase with this page’s ids when the cookie API fails, whatever it rejects with', async () => {
    for (const reason of [new Error('top frame gone'), undefined, 'blocked']) {
      sent = []
      const shop = fakeApi({ failures: { cookie: { reason } } })
      const connection = connectShopify(shop.api, options())
      shop.publish('checkout_completed', checkoutCompleted(sampleOrder()))
      shop.publish('checkout_completed', checkoutCompleted(sampleOrder({ id: 'gid://shopify/OrderIdentity/2' })))
      await waitFor(() => sent.flatMap((request) => request.events).length == 2, 'both purchases')
      const [first, second] = sent.flatMap((request) => request.events)
      expect(first.user.uid).toMatch(/^[\w-]{21}$/)
      expect(second.user.uid).toBe(first.user.uid)
      expect(connection.stats().dropped.invalid).toBe(0)
    }
    expect(errors).toEqual([])
  })

  it('deletes our cookies on a decline even where the shop’s storage throws, and leaves no promise unhandled', async () => {
    const stale = JSON.stringify({ event: 'view-page', event_id: 'x', key: 'KEY', t_client: 1 })
    const shop = fakeApi({ customerPrivacy: consent(false), cookies: { df_uid: UID, df_sid: SID }, stored: new Map([['df_pixel_stale', stale]]) })
    shop.failures.storage = true
    connectShopify(shop.api, options())
    shop.collectConsent(true)
    shop.publish('checkout_completed', checkoutCompleted(sampleOrder()))
    await waitFor(() => sent.length == 1, 'the purchase')
    shop.collectConsent(false)
    await waitFor(() => !shop.jar.size, 'the cookies deleted')
  })

  it('writes nothing at all when a shopper without ids declines, with cookieDomain auto (no domain probe)', async () => {
    const shop = fakeApi({ customerPrivacy: consent(false) })
    const connection = connectShopify(shop.api, options({ cookieDomain: 'auto' }))
    shop.publish('checkout_completed', checkoutCompleted(sampleOrder()))
    shop.collectConsent(false)
    await connection.flush()
    await sleep(50)
    expect(shop.cookieWrites).toEqual([])
    expect(sent).toEqual([])
  })

  it('finds the storefront’s cookie domain with cookieDomain auto, and deletes on every domain when a shopper with ids declines', async () => {
    const shop = fakeApi({ cookies: { df_uid: UID, df_sid: SID } })
    connectShopify(shop.api, options({ cookieDomain: 'auto' }))
    shop.publish('checkout_completed', checkoutCompleted(sampleOrder()))
    await waitFor(() => sent.length == 1, 'the purchase')
    // The fake jar takes any domain: the first candidate, the last two labels, is the site's.
    expect(shop.cookieWrites.slice(-2)).toEqual([
      `df_uid=${UID}; path=/; max-age=34560000; SameSite=Lax; Secure; domain=demo-store.example`,
      `df_sid=${SID}; path=/; max-age=1800; SameSite=Lax; Secure; domain=demo-store.example`
    ])
    shop.collectConsent(false)
    await waitFor(() => !shop.jar.has('df_uid') && !shop.jar.has('df_sid'), 'the cookies deleted')
  })

  it('follows the visitor changing their mind on the page: granted, declined, granted again', async () => {
    const shop = fakeApi({ customerPrivacy: consent(false) })
    connectShopify(shop.api, options())
    shop.collectConsent(true)
    shop.collectConsent(false)
    shop.publish('checkout_completed', checkoutCompleted(sampleOrder()))
    await sleep(1200)
    expect(sent).toEqual([])
    shop.collectConsent(true)
    shop.publish('checkout_completed', checkoutCompleted(sampleOrder({ id: 'gid://shopify/OrderIdentity/9' })))
    await waitFor(() => sent.length == 1, 'the purchase after consent again')
    expect(sent[0].events.map((event) => event.properties.order_id)).toEqual(['9'])
  })

  it('maps discounts once: unit prices are the variants’, every discount is in total_discount', async () => {
    const shop = fakeApi()
    connectShopify(shop.api, options())
    shop.publish('checkout_completed', checkoutCompleted(sampleOrder({ discount: 10 })))
    await waitFor(() => sent.length == 1, 'the purchase')
    const { properties } = sent[0].events[0]
    expect(properties).toMatchObject({ revenue: 133.7, total_discount: 10 })
    expect(properties.line_items.map((line: { unit_price: number }) => line.unit_price)).toEqual([39.9, 59])
  })

  it('reports a line whose itemIds() throws, and still sends the purchase', async () => {
    const shop = fakeApi()
    connectShopify(shop.api, options({ itemIds: (variant) => ({ item_id: variant.sku!.toLowerCase(), variant_item_id: variant.sku! }) }))
    const data = checkoutCompleted(sampleOrder())
    data.checkout.lineItems[1].variant!.sku = null
    shop.publish('checkout_completed', data)
    await waitFor(() => sent.length == 1, 'the purchase')
    expect(sent[0].events[0].properties.line_items).toHaveLength(1)
    expect(errors.map((error) => [error.event, error.field])).toEqual([['checkout_completed', 'checkout.lineItems[1]']])
  })

  it('sends order status pages, not a theme’s account pages, and each checkout page after the one before it', async () => {
    const shop = fakeApi()
    const connection = connectShopify(shop.api, options())
    const first = 'https://demo-store.example/checkouts/cn/c1/information'
    const status = 'https://demo-store.example/63510912345/orders/9f8e7d6c'
    shop.publish('page_viewed', pageViewed(), 'https://demo-store.example/account/orders/1001')
    shop.publish('page_viewed', pageViewed(), first)
    shop.publish('page_viewed', pageViewed(), status)
    await connection.flush()
    expect(delivered().map((event) => [event.properties.url, event.properties.ref])).toEqual([
      [first, ''],
      [status, first]
    ])
  })
})
