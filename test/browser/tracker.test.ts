import { describe, expect, it, vi } from 'vitest'
import { createTracker } from '../../src/browser/tracker'
import { ENDPOINT, isolateEachTest, make, network, setVisibility, settle } from '../support/helpers'
import { quietConsole } from '../support/console'

const click = { rid: 's-1', item_id: '42', variant_item_id: '421' }

isolateEachTest()

describe('createTracker', () => {
  it('batches events into one request after the flush interval', () => {
    const net = network()
    const tracker = make()
    tracker.clickItem(click)
    tracker.clickSuggestion({ rid: 'a-1', suggestion: 'shoes' })
    vi.advanceTimersByTime(999)
    expect(net.fetch).not.toHaveBeenCalled()
    vi.advanceTimersByTime(1)
    expect(net.fetch).toHaveBeenCalledTimes(1)
    expect(net.events().map((event) => event.event)).toEqual(['click-item', 'click-suggestion'])
  })

  it('sends by fetch while visible, with keepalive and a text body (a safelisted type: no preflight)', () => {
    const net = network()
    const tracker = make()
    tracker.clickItem(click)
    tracker.flush()
    const [url, init] = net.fetch.mock.calls[0]
    expect(url).toMatch(/^https:\/\/collector\.example\/v3\/feedback\?t_sent=\d+$/)
    expect(init).toMatchObject({ method: 'POST', keepalive: true })
    // The default, same-origin: cookies only to a relay on the shop's own origin.
    expect(init.credentials).toBeUndefined()
    // A string body goes as text/plain;charset=UTF-8; a header of our own could make it preflighted.
    expect(typeof init.body).toBe('string')
    expect(init.headers).toBeUndefined()
    expect(init.mode ?? 'cors').toBe('cors')
    expect(net.sendBeacon).not.toHaveBeenCalled()
  })

  it('sends as soon as maxBatchEvents are queued', () => {
    const net = network()
    const tracker = make({ maxBatchEvents: 3 })
    tracker.clickItem(click)
    tracker.clickItem(click)
    expect(net.fetch).not.toHaveBeenCalled()
    tracker.clickItem(click)
    vi.advanceTimersByTime(0)
    expect(net.events()).toHaveLength(3)
  })

  it('by default sends a batch once 50 events wait, each batch in one request', () => {
    const net = network()
    const tracker = make({ autoViewPage: false })
    for (let i = 0; i < 49; i++) tracker.clickItem(click)
    vi.advanceTimersByTime(0)
    expect(net.fetch).not.toHaveBeenCalled()
    tracker.clickItem(click)
    vi.advanceTimersByTime(0)
    expect(net.fetch).toHaveBeenCalledTimes(1)
    expect(net.events()).toHaveLength(50)
  })

  it('sends by beacon at once when the page turns hidden, and on pagehide', () => {
    const net = network()
    const tracker = make()
    tracker.clickItem(click)
    setVisibility('hidden')
    expect(net.sendBeacon).toHaveBeenCalledTimes(1)
    tracker.clickItem(click)
    dispatchEvent(new Event('pagehide'))
    expect(net.sendBeacon).toHaveBeenCalledTimes(2)
    expect(net.sendBeacon.mock.calls[0][0]).toMatch(/^https:\/\/collector\.example\/v3\/feedback\?t_sent=\d+$/)
    expect(net.events()).toHaveLength(2)
    expect(net.fetch).not.toHaveBeenCalled()
  })

  it('builds the envelope at call time with one identity', () => {
    const net = network()
    vi.setSystemTime(1767261600000)
    const tracker = make()
    tracker.redirect({ rid: 'a-9', suggestion: 'sale' })
    vi.setSystemTime(1767261605000)
    tracker.flush()
    const [event] = net.events()
    expect(event).toMatchObject({ event: 'redirect', properties: { rid: 'a-9', suggestion: 'sale' }, key: 'KEY', t_client: 1767261600000 })
    expect(event.user).toEqual(tracker.user)
    expect(event.user).toMatchObject({ ua: navigator.userAgent, lang: [...navigator.languages] })
    expect(event.user).not.toHaveProperty('ip')
    expect(net.fetch.mock.calls[0][0]).toContain('t_sent=1767261605000')
  })

  it('snapshots properties: changing the object after the call changes nothing', () => {
    const net = network()
    const tracker = make()
    const cart = { line_items: [{ item_id: '1', variant_item_id: '1', unit_price: 5, quantity: 1 }] }
    tracker.updateCart(cart)
    cart.line_items[0].quantity = 9
    tracker.flush()
    expect(net.events()[0].properties).toEqual({ line_items: [{ item_id: '1', variant_item_id: '1', unit_price: 5, quantity: 1 }] })
  })

  it.each(['addToCart', 'track'])('sends add-to-cart with the click-item that goes with it, through %s', (method) => {
    const net = network()
    const tracker = make()
    const properties = { item_id: '42', variant_item_id: '421', quantity: 2, rid: 'r-1' }
    if (method == 'track') tracker.track('add-to-cart', properties)
    else tracker.addToCart(properties)
    tracker.flush()
    expect(net.events().map(({ event, properties }) => ({ event, properties }))).toEqual([
      { event: 'click-item', properties: { rid: 'r-1', item_id: '42', variant_item_id: '421' } },
      { event: 'add-to-cart', properties: { item_id: '42', variant_item_id: '421', quantity: 2, rid: 'r-1' } }
    ])
  })

  it('sends neither when add-to-cart is invalid', () => {
    const net = network()
    quietConsole()
    const tracker = make()
    tracker.addToCart({ item_id: '42', variant_item_id: '421', quantity: 0, rid: 'r-1' })
    tracker.flush()
    expect(net.fetch).not.toHaveBeenCalled()
  })

  it('reports a bad call to onError and the console, never throws, and keeps working', () => {
    const net = network()
    const onError = vi.fn()
    const consoleError = quietConsole()
    const tracker = make({ onError })
    const t = tracker as any
    expect(() => {
      t.purchase(null)
      t.purchase()
      t.clickItem({ item_id: 5 })
      t.track('nope', {})
      t.track(undefined)
      t.updateCart({ line_items: [{}] })
      t.viewPage('x')
      t.identify({ uid: 'x'.repeat(40) })
    }).not.toThrow()
    expect(onError).toHaveBeenCalledTimes(8)
    expect(onError.mock.calls[2][0]).toMatchObject({
      name: 'FeedbackError',
      event: 'click-item',
      field: 'item_id',
      message: 'discovery-feedback: click-item: item_id must be a non-empty string, got 5'
    })
    expect(consoleError).toHaveBeenCalledWith('discovery-feedback: click-item: item_id must be a non-empty string, got 5')
    tracker.clickItem(click)
    tracker.flush()
    expect(net.events().map((event) => event.properties)).toEqual([click])
    expect(tracker.stats().dropped.invalid).toBe(8)
  })

  it('survives an onError handler that throws, and keeps tracking and sending', async () => {
    const net = network()
    quietConsole()
    const tracker = make({
      onError: () => {
        throw new Error('handler bug')
      }
    })
    expect(() => tracker.track('nope' as never, {} as never)).not.toThrow()
    tracker.clickItem(click)
    await tracker.flush()
    expect(net.events().map((event) => event.properties)).toEqual([click])
    expect(tracker.stats()).toMatchObject({ queued: 0, sent: 1, dropped: { invalid: 1 } })
  })

  it("throws in strict mode, for the merchant's own tests", () => {
    const tracker = make({ strict: true })
    expect(() => tracker.clickItem({ item_id: '', variant_item_id: '1' })).toThrow(
      'discovery-feedback: click-item: item_id must be a non-empty string, got string'
    )
  })

  it.each([
    [{ endpoint: ENDPOINT }, 'discovery-feedback: init: key is required'],
    [{ key: 'KEY' }, 'discovery-feedback: init: endpoint is required'],
    [{ key: 'KEY', endpoint: ENDPOINT, user: { uid: 3 } }, 'discovery-feedback: init: user.uid must be a string of 1 to 32 characters']
  ])('reports bad options %o at creation, then refuses calls with the same message', (options, message) => {
    const net = network()
    const onError = vi.fn()
    quietConsole()
    const tracker = createTracker({ ...(options as any), onError, autoViewPage: false })
    expect(onError).toHaveBeenCalledTimes(1)
    expect(onError.mock.calls[0][0].message).toContain(message)
    tracker.clickItem(click)
    expect(onError).toHaveBeenCalledTimes(2)
    expect(onError.mock.calls[1][0].message).toContain(message)
    expect(() => createTracker({ ...(options as any), strict: true })).toThrow(message)
    // Even with no options at all: a tracker comes back whose calls are reported, not thrown.
    let bare: ReturnType<typeof createTracker> | undefined
    expect(() => (bare = (createTracker as any)())).not.toThrow()
    expect(() => bare!.clickItem(click)).not.toThrow()
    // The page's other tracker, made right, still tracks and sends.
    const good = make({ onError })
    good.clickItem(click)
    good.flush()
    expect(net.events().map((event) => event.properties)).toEqual([click])
  })

  it('uses platform identity from options and identify()', () => {
    const net = network()
    const tracker = make({ user: { uid: 'customer-7', ip: '203.0.113.9' } })
    tracker.clickItem(click)
    tracker.identify({ email: 'shopper@example.com' })
    tracker.clickItem(click)
    tracker.flush()
    const [before, after] = net.events().map((event) => event.user)
    expect(before).toMatchObject({ uid: 'customer-7', ip: '203.0.113.9' })
    expect(before).not.toHaveProperty('email')
    expect(after).toMatchObject({ uid: 'customer-7', ip: '203.0.113.9', email: 'shopper@example.com' })
    expect(before.sid).toBe(after.sid)
  })

  it('falls back to a keepalive fetch when the browser refuses a beacon as the page hides', async () => {
    const net = network({ acceptBeacon: () => false })
    const tracker = make()
    tracker.clickItem(click)
    setVisibility('hidden')
    expect(net.sendBeacon).toHaveBeenCalledTimes(1)
    expect(net.fetch).toHaveBeenCalledTimes(1)
    expect(net.fetch.mock.calls[0][1]).toMatchObject({ keepalive: true })
    await settle()
    expect(net.events().map((event) => event.properties)).toEqual([click])
    expect(tracker.stats()).toMatchObject({ queued: 0, sent: 1 })
  })

  it('splits a burst into bodies under maxBatchBytes, every event once', () => {
    const net = network()
    const tracker = make({ maxBatchEvents: 1000, maxBatchBytes: 16384 })
    for (let i = 0; i < 400; i++) tracker.clickItem({ ...click, item_id: String(i) })
    setVisibility('hidden')
    expect(net.delivered.length).toBeGreaterThan(5)
    for (const { body } of net.delivered) expect(new TextEncoder().encode(body).length).toBeLessThanOrEqual(16384)
    expect(net.events().map((event) => event.properties.item_id)).toEqual(Array.from({ length: 400 }, (_, i) => String(i)))
  })

  it('refuses calls after destroy() and flushes what was queued', () => {
    const net = network()
    const onError = vi.fn()
    quietConsole()
    const tracker = make({ onError })
    tracker.clickItem(click)
    tracker.destroy()
    expect(net.events()).toHaveLength(1)
    tracker.clickItem(click)
    expect(onError.mock.calls[0][0].message).toBe('discovery-feedback: click-item: was tracked after destroy()')
  })
})

describe('automatic view-page', () => {
  const views = (beacons: ReturnType<typeof network>) =>
    beacons
      .events()
      .filter((event) => event.event == 'view-page')
      .map((event) => event.properties)

  it('sends one on load with the referrer and the viewport size', () => {
    const beacons = network()
    make({ autoViewPage: true })
    vi.advanceTimersByTime(0)
    setVisibility('hidden')
    expect(views(beacons)).toEqual([{ url: location.href, ref: document.referrer, width: innerWidth, height: innerHeight }])
  })

  it('lets a page that describes itself (a product page) replace the automatic one', () => {
    const beacons = network()
    const tracker = make({ autoViewPage: true })
    tracker.viewPage({ item_id: '42', variant_item_id: '421' })
    vi.advanceTimersByTime(0)
    setVisibility('hidden')
    expect(views(beacons)).toEqual([{ url: location.href, ref: '', width: innerWidth, height: innerHeight, item_id: '42', variant_item_id: '421' }])
  })

  it('follows pushState, replaceState that changes the URL, and popstate, with the previous URL as ref', () => {
    const beacons = network()
    make({ autoViewPage: true })
    vi.advanceTimersByTime(0)
    const origin = location.origin
    history.pushState(null, '', '/a')
    vi.advanceTimersByTime(0)
    history.pushState(null, '', '/b')
    vi.advanceTimersByTime(0)
    history.replaceState({ scroll: 1 }, '', '/b') // same URL: not a new page
    vi.advanceTimersByTime(0)
    history.replaceState(null, '', '/c')
    vi.advanceTimersByTime(0)
    history.pushState(null, '', '/c') // same URL again: never twice in a row
    vi.advanceTimersByTime(0)
    history.replaceState(null, '', '/a') // what a back navigation leaves behind
    dispatchEvent(new PopStateEvent('popstate'))
    vi.advanceTimersByTime(0)
    setVisibility('hidden')
    expect(views(beacons).map(({ url, ref }) => [url.replace(origin, ''), ref.replace(origin, '')])).toEqual([
      ['/', ''],
      ['/a', '/'],
      ['/b', '/a'],
      ['/c', '/b'],
      ['/a', '/c']
    ])
  })

  it('sends one per navigation when a router pushes twice in one task', () => {
    const beacons = network()
    make({ autoViewPage: true })
    vi.advanceTimersByTime(0)
    history.pushState(null, '', '/redirecting')
    history.replaceState(null, '', '/landed')
    vi.advanceTimersByTime(0)
    setVisibility('hidden')
    expect(views(beacons).map((view) => view.url.replace(location.origin, ''))).toEqual(['/', '/landed'])
  })

  it('sends another after a back/forward-cache restore, even for the same URL', () => {
    const beacons = network()
    make({ autoViewPage: true })
    vi.advanceTimersByTime(0)
    dispatchEvent(new PageTransitionEvent('pageshow', { persisted: false }))
    vi.advanceTimersByTime(0)
    dispatchEvent(new PageTransitionEvent('pageshow', { persisted: true }))
    vi.advanceTimersByTime(0)
    setVisibility('hidden')
    expect(views(beacons)).toHaveLength(2)
  })

  it('stays off with autoViewPage: false, and destroy() restores history', () => {
    const beacons = network()
    const pushState = history.pushState
    const tracker = make({ autoViewPage: true })
    expect(history.pushState).not.toBe(pushState)
    tracker.destroy()
    expect(history.pushState).toBe(pushState)
    make()
    history.pushState(null, '', '/elsewhere')
    vi.advanceTimersByTime(0)
    setVisibility('hidden')
    expect(views(beacons)).toEqual([])
  })

  it('leaves a later wrapper of history working after destroy()', () => {
    const beacons = network()
    const tracker = make({ autoViewPage: true })
    vi.advanceTimersByTime(0)
    const ours = history.pushState
    const seen: string[] = []
    history.pushState = function (...args: Parameters<History['pushState']>) {
      seen.push(String(args[2]))
      return ours.apply(this, args)
    }
    tracker.destroy()
    history.pushState(null, '', '/after')
    vi.advanceTimersByTime(0)
    expect(seen).toEqual(['/after'])
    expect(location.pathname).toBe('/after')
    expect(views(beacons)).toHaveLength(1)
  })
})
