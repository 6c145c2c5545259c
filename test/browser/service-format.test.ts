import { beforeEach, describe, expect, it, vi } from 'vitest'
import { CHECK_AFTER } from '../../src/browser/delivery'
import type { CommandFunction } from '../../src/index'
import { quietConsole } from '../support/console'
import { ENDPOINT, fakeLocks, isolateEachTest, make, network, setVisibility, settle, stored } from '../support/helpers'
import { installStub, runScriptTag } from '../support/script-tags'

// `format: 'spec'`: the tracker sends to the service itself, one SPEC envelope per request.

const click = (item_id = '42') => ({ item_id, variant_item_id: item_id + '-1' })
const spec = (options = {}) => make({ format: 'spec', ...options })
const SPEC_FIELDS = ['event', 'key', 'properties', 't_client', 'user']

/** What each request carried, as the service would parse it: one object per body. */
const requests = (net: ReturnType<typeof network>) => net.delivered.map(({ via, url, body }) => ({ via, url, event: JSON.parse(body) }))
const itemIds = (net: ReturnType<typeof network>) => requests(net).map((request) => request.event.properties.item_id)
/** The service answers 200 from now on, and what it took counts as delivered. */
const serviceBack = (net: ReturnType<typeof network>) =>
  net.fetch.mockImplementation((url, init) => {
    net.delivered.push({ via: 'fetch', url, body: init.body as string })
    return Promise.resolve(new Response(null, { status: 200 }))
  })

isolateEachTest()
beforeEach(() => {
  quietConsole()
})

describe("format 'spec': the request", () => {
  it('sends each event on its own: a POST of one SPEC envelope, the key in the query and the body, no id, no send time', async () => {
    const net = network()
    const tracker = spec()
    tracker.clickItem(click('1'))
    tracker.clickItem(click('2'))
    tracker.purchase({ order_id: 'o-1', currency: 'EUR', revenue: 10, line_items: [{ item_id: '1', variant_item_id: '1-1', unit_price: 10, quantity: 1 }] })
    await tracker.flush()
    await settle()
    expect(net.fetch).toHaveBeenCalledTimes(3)
    for (const [url, init] of net.fetch.mock.calls) {
      expect(url).toBe(ENDPOINT + '?key=KEY')
      expect(init.method).toBe('POST')
      // A string body goes as text/plain;charset=UTF-8, a CORS-safelisted type: no preflight.
      expect(typeof init.body).toBe('string')
      expect(init.headers).toBeUndefined()
      const event = JSON.parse(init.body as string)
      expect(Array.isArray(event)).toBe(false)
      expect(Object.keys(event).sort()).toEqual(SPEC_FIELDS)
      expect(event.key).toBe('KEY')
      expect(Object.keys(event.user).sort()).toEqual(['lang', 'sid', 'ua', 'uid'])
    }
    expect(requests(net).map((request) => request.event.event)).toEqual(['click-item', 'click-item', 'purchase'])
    expect(itemIds(net)).toEqual(['1', '2', undefined])
    expect(tracker.stats()).toMatchObject({ queued: 0, sent: 3 })
    // The event ids stay in the outbox for its own work; none is left.
    expect(stored()).toEqual([])
  })

  it('adds the key to a query the endpoint already has, encoded', async () => {
    const net = network()
    const tracker = spec({ endpoint: ENDPOINT + '?shop=1', key: 'a&b c' })
    tracker.clickItem(click())
    await tracker.flush()
    const url = new URL(net.fetch.mock.calls[0][0] as string)
    expect([...url.searchParams]).toEqual([
      ['shop', '1'],
      ['key', 'a&b c']
    ])
    expect(JSON.parse(net.fetch.mock.calls[0][1].body as string).key).toBe('a&b c')
  })

  it('sends the click-item that goes with an add-to-cart as a request of its own', async () => {
    const net = network()
    const tracker = spec()
    tracker.addToCart({ item_id: '7', variant_item_id: '7-1', quantity: 1, rid: 'r-1' })
    await tracker.flush()
    expect(requests(net).map((request) => request.event.event)).toEqual(['click-item', 'add-to-cart'])
  })

  it("leaves 'batch' as it was: JSON arrays with event ids and the send time", async () => {
    const net = network()
    const tracker = make({ format: 'batch' })
    tracker.clickItem(click('1'))
    tracker.clickItem(click('2'))
    await tracker.flush()
    expect(net.fetch).toHaveBeenCalledTimes(1)
    const [url, init] = net.fetch.mock.calls[0]
    expect(new URL(url as string).searchParams.has('t_sent')).toBe(true)
    expect(JSON.parse(init.body as string).map((event: { event_id: string }) => typeof event.event_id)).toEqual(['string', 'string'])
  })

  it('is chosen on the script tag with data-format="spec"', async () => {
    const net = network()
    installStub()
    const global = window as unknown as { discoveryFeedback: CommandFunction }
    await runScriptTag('tracker', { key: 'KEY', endpoint: ENDPOINT, autoViewPage: 'false', format: 'spec' })
    global.discoveryFeedback('click-item', click('9'))
    global.discoveryFeedback('flush')
    await settle()
    expect(requests(net).map(({ url, event }) => [url, event.properties.item_id, 'event_id' in event])).toEqual([[ENDPOINT + '?key=KEY', '9', false]])
    global.discoveryFeedback.tracker!.destroy()
  })
})

describe("format 'spec': answers", () => {
  it('retries a 503 with the backoff, then delivers each event once', async () => {
    let down = true
    const net = network({ answer: () => (down ? { status: 503 } : { status: 204 }) })
    vi.spyOn(Math, 'random').mockReturnValue(1)
    const tracker = spec()
    tracker.clickItem(click('1'))
    tracker.clickItem(click('2'))
    await tracker.flush()
    await settle()
    expect(tracker.stats()).toMatchObject({ queued: 2, sent: 0, retried: 2 })
    // Failing, it probes with one request a step: a second after the first failure, then two.
    await vi.advanceTimersByTimeAsync(999)
    expect(net.fetch).toHaveBeenCalledTimes(2)
    await vi.advanceTimersByTimeAsync(1)
    expect(net.fetch).toHaveBeenCalledTimes(3)
    down = false
    await vi.advanceTimersByTimeAsync(2100)
    expect(itemIds(net).sort()).toEqual(['1', '2'])
    expect(tracker.stats()).toMatchObject({ queued: 0, sent: 2 })
    await vi.advanceTimersByTimeAsync(60000)
    expect(itemIds(net).sort()).toEqual(['1', '2'])
  })

  it('drops and reports an event the service refuses with a 4xx, and only that one', async () => {
    const net = network({ answer: (body) => (JSON.parse(body).properties.item_id == 'bad' ? { status: 400 } : { status: 200 }) })
    const onError = vi.fn()
    const tracker = spec({ onError })
    tracker.clickItem(click('1'))
    tracker.clickItem(click('bad'))
    tracker.clickItem(click('3'))
    await tracker.flush()
    await settle()
    expect(itemIds(net)).toEqual(['1', '3'])
    expect(tracker.stats()).toMatchObject({ queued: 0, sent: 2, dropped: { rejected: 1 } })
    expect(onError.mock.calls.map(([error]) => error.message)).toEqual(['discovery-feedback: click-item: event dropped: refused, the collector answered 400'])
    await vi.advanceTimersByTimeAsync(60000)
    expect(net.fetch).toHaveBeenCalledTimes(3)
  })

  it.each([408, 429])('keeps the event on %i', async (status) => {
    network({ answer: () => ({ status }) })
    const tracker = spec()
    tracker.clickItem(click())
    await tracker.flush()
    await settle()
    expect(tracker.stats()).toMatchObject({ queued: 1, retried: 1, dropped: { rejected: 0 } })
  })
})

describe("format 'spec': leaving the page", () => {
  it('sends by one beacon per event when the page turns hidden, counts them delivered, and never sends or asks again', async () => {
    const net = network()
    const tracker = spec()
    tracker.clickItem(click('1'))
    tracker.clickItem(click('2'))
    setVisibility('hidden')
    expect(net.sendBeacon).toHaveBeenCalledTimes(2)
    expect(requests(net).map(({ via, url, event }) => [via, url, Object.keys(event).sort()])).toEqual([
      ['beacon', ENDPOINT + '?key=KEY', SPEC_FIELDS],
      ['beacon', ENDPOINT + '?key=KEY', SPEC_FIELDS]
    ])
    expect(itemIds(net)).toEqual(['1', '2'])
    expect(tracker.stats()).toMatchObject({ sent: 2 })
    setVisibility('visible')
    await vi.advanceTimersByTimeAsync(CHECK_AFTER + 60000)
    // The service cannot be asked which it lacks: handed over, they count as delivered.
    expect(net.fetch).not.toHaveBeenCalled()
    expect(net.sendBeacon).toHaveBeenCalledTimes(2)
    expect(tracker.stats().queued).toBe(0)
    expect(stored()).toEqual([])
  })

  it('puts the view-page of a page left at once in a beacon of its own', async () => {
    const net = network()
    spec({ autoViewPage: true })
    // Left before the task that records the view: the page's way out records it.
    dispatchEvent(new Event('pagehide'))
    expect(requests(net).map(({ via, event }) => [via, event.event, event.properties.url])).toEqual([['beacon', 'view-page', location.href]])
  })

  it('beacons nothing while the service is failing: the next page sends what waits', async () => {
    const net = network({ answer: () => ({ status: 503 }) })
    const first = spec()
    first.clickItem(click('1'))
    await first.flush()
    await settle()
    first.clickItem(click('2'))
    dispatchEvent(new Event('pagehide'))
    expect(net.sendBeacon).not.toHaveBeenCalled()
    expect(stored().map((event) => event.properties.item_id)).toEqual(['1', '2'])
    // The service is back; a new page of the shop takes what the first left.
    serviceBack(net)
    const next = spec()
    await settle()
    await next.flush()
    await settle()
    expect(itemIds(net)).toEqual(['1', '2'])
    expect(next.stats()).toMatchObject({ queued: 0, sent: 2 })
    expect(stored()).toEqual([])
  })

  it('keeps what the browser refused to beacon, unsent, for the next page', async () => {
    let beacons = 1
    const net = network({ acceptBeacon: () => beacons-- > 0 })
    fakeLocks()
    const first = spec()
    first.clickItem(click('1'))
    first.clickItem(click('2'))
    dispatchEvent(new Event('pagehide'))
    // The second was not handed over, so no request may carry it on the way out.
    expect(itemIds(net)).toEqual(['1'])
    expect(net.fetch).not.toHaveBeenCalled()
    // The page is gone: the browser lets its lock go.
    await settle()
    const next = spec()
    await settle()
    await next.flush()
    await settle()
    expect(itemIds(net)).toEqual(['1', '2'])
    await vi.advanceTimersByTimeAsync(CHECK_AFTER + 1000)
    expect(itemIds(net)).toEqual(['1', '2'])
    expect(stored()).toEqual([])
  })

  it('sends again on the next page the probe that was in flight to a failing service as the page went', async () => {
    const net = network({ answer: () => ({ status: 503 }) })
    const first = spec()
    first.clickItem(click('1'))
    await first.flush()
    await settle()
    // The backoff's probe is on its way when the page goes, and its answer never comes back.
    await vi.advanceTimersByTimeAsync(1000)
    net.fetch.mockImplementationOnce(() => new Promise<Response>(() => {}))
    await vi.advanceTimersByTimeAsync(60000)
    dispatchEvent(new Event('pagehide'))
    expect(net.sendBeacon).not.toHaveBeenCalled()
    serviceBack(net)
    const next = spec()
    await settle()
    await next.flush()
    await settle()
    expect(itemIds(net)).toEqual(['1'])
    expect(stored()).toEqual([])
  })

  it('does not resend on the next page what a request carried as the page went', async () => {
    const net = network()
    // The request is on its way when the page goes; its answer never comes back to the page.
    net.fetch.mockImplementationOnce((url, init) => {
      net.delivered.push({ via: 'fetch', url, body: init.body as string })
      return new Promise<Response>(() => {})
    })
    const first = spec()
    first.clickItem(click('1'))
    first.flush()
    dispatchEvent(new Event('pagehide'))
    expect(net.sendBeacon).not.toHaveBeenCalled()
    const next = spec()
    await settle()
    await vi.advanceTimersByTimeAsync(CHECK_AFTER + 60000)
    expect(itemIds(net)).toEqual(['1'])
    expect(next.stats().queued).toBe(0)
    expect(stored()).toEqual([])
  })
})
