import { beforeEach, describe, expect, it, vi } from 'vitest'
import { MAX_EVENTS } from '../../src/browser/outbox'
import type { Envelope } from '../../src/index'
import { CHECK_AFTER } from '../../src/browser/delivery'
import { fakeLocks, isolateEachTest, make, network, setVisibility, settle, stored } from '../support/helpers'
import { quietConsole } from '../support/console'

const click = (item_id = '42') => ({ item_id, variant_item_id: item_id + '-1' })

isolateEachTest()
beforeEach(() => {
  quietConsole()
})

describe('outbox', () => {
  it('stores an event before the task that tracked it ends, one key per event, and forgets it at the 2xx', async () => {
    network()
    const tracker = make()
    tracker.clickItem(click())
    tracker.clickItem(click('43'))
    await Promise.resolve()
    expect(stored().map((event) => event.properties)).toEqual([click(), click('43')])
    const writes = vi.spyOn(Storage.prototype, 'setItem')
    tracker.clickItem(click('44'))
    await Promise.resolve()
    // One write for the new event, however long the queue is.
    expect(writes).toHaveBeenCalledTimes(1)
    await tracker.flush()
    await settle()
    expect(stored()).toEqual([])
    expect(tracker.stats()).toMatchObject({ queued: 0, sent: 3 })
  })

  it('sends what a page that is gone left behind, with its event_id and t_client', async () => {
    const net = network({ answer: () => 'offline' })
    const locks = fakeLocks()
    vi.setSystemTime(1767261600000)
    const first = make()
    first.clickItem(click('1'))
    first.clickItem(click('2'))
    await first.flush()
    await settle()
    const left = stored()
    expect(left).toHaveLength(2)
    // The page dies without a word: no pagehide, no destroy; the browser lets its lock go.
    const [lock] = locks.held()
    locks.die(lock)
    net.fetch.mockImplementation(() => Promise.resolve(new Response(null, { status: 204 })))
    const next = make()
    await settle()
    await next.flush()
    await settle()
    const sent = net.fetch.mock.calls.flatMap(([, init]) => JSON.parse(init.body as string) as Envelope[])
    const delivered = sent.slice(-2)
    expect(delivered.map((event) => [event.event_id, event.t_client])).toEqual(left.map((event) => [event.event_id, event.t_client]))
    expect(stored()).toEqual([])
  })

  /** A page whose one event waits (the collector is unreachable), then a second page opened. */
  const pageAndNext = async () => {
    network({ answer: () => 'offline' })
    const first = make()
    first.clickItem(click())
    await first.flush()
    await settle()
    const second = make()
    await settle()
    return [first, second]
  }

  it('leaves alone the outbox of a page that is alive', async () => {
    fakeLocks()
    const [first, second] = await pageAndNext()
    expect(second.stats().queued).toBe(0)
    expect(first.stats().queued).toBe(1)
  })

  it('without Web Locks, takes only the events of a page that went by pagehide', async () => {
    const [first, second] = await pageAndNext()
    expect([first.stats().queued, second.stats().queued]).toEqual([1, 0])
    dispatchEvent(new Event('pagehide'))
    const third = make()
    await settle()
    expect(third.stats().queued).toBe(1)
    expect(stored()).toHaveLength(1)
  })

  it('hands its outbox to the next page at once on pagehide', async () => {
    const net = network({ answer: () => ({ status: 503 }), acceptBeacon: () => false })
    const first = make()
    first.clickItem(click())
    dispatchEvent(new Event('pagehide'))
    await settle()
    net.fetch.mockImplementation((_, init) => {
      net.delivered.push({ via: 'fetch', url: '', body: init.body as string })
      return Promise.resolve(new Response(null, { status: 204 }))
    })
    const next = make()
    await settle()
    expect(next.stats()).toMatchObject({ queued: 0, sent: 1 })
    expect(net.events().map((event) => event.properties)).toEqual([click()])
    expect(stored()).toEqual([])
  })

  it('offline on the way out: the next page sends at once what could not leave', async () => {
    const net = network({ answer: () => 'offline', acceptBeacon: () => false })
    const offline = vi.spyOn(navigator, 'onLine', 'get').mockReturnValue(false)
    const first = make()
    first.clickItem(click())
    dispatchEvent(new Event('pagehide'))
    await settle()
    offline.mockRestore()
    net.fetch.mockImplementation((_, init) => {
      net.delivered.push({ via: 'fetch', url: '', body: init.body as string })
      return Promise.resolve(new Response(null, { status: 204 }))
    })
    const next = make()
    await settle()
    expect(next.stats()).toMatchObject({ queued: 0, sent: 1 })
    expect(net.events().map((event) => event.properties)).toEqual([click()])
  })

  it('keeps working from memory when storage throws', async () => {
    const net = network()
    vi.spyOn(Storage.prototype, 'setItem').mockImplementation(() => {
      throw new DOMException('quota', 'QuotaExceededError')
    })
    const tracker = make()
    tracker.clickItem(click())
    await Promise.resolve()
    await tracker.flush()
    expect(net.events().map((event) => event.properties)).toEqual([click()])
  })

  it('keeps working when even reading localStorage throws', async () => {
    const net = network()
    vi.spyOn(window, 'localStorage', 'get').mockImplementation(() => {
      throw new DOMException('denied', 'SecurityError')
    })
    const tracker = make()
    tracker.clickItem(click())
    await tracker.flush()
    expect(net.events()).toHaveLength(1)
  })

  it('sends what a gone page left up to 7 days old; older, it drops, counts and reports', async () => {
    const net = network({ answer: () => 'offline' })
    const locks = fakeLocks()
    const DAY = 864e5
    const start = 1767261600000
    // A page tracks two clicks two minutes apart while the collector is unreachable, and dies.
    vi.setSystemTime(start)
    const first = make()
    first.clickItem(click('older'))
    vi.setSystemTime(start + 2 * 60000)
    first.clickItem(click('newer'))
    await first.flush()
    await settle()
    expect(stored()).toHaveLength(2)
    locks.die(locks.held()[0])
    // A week and a minute after the first click, the second is a minute short of a week old.
    vi.setSystemTime(start + 7 * DAY + 60000)
    net.fetch.mockImplementation((_, init) => {
      net.delivered.push({ via: 'fetch', url: '', body: init.body as string })
      return Promise.resolve(new Response(null, { status: 204 }))
    })
    const onError = vi.fn()
    const next = make({ onError })
    await settle()
    await next.flush()
    await settle()
    expect(net.events().map((event) => event.properties.item_id)).toEqual(['newer'])
    expect(next.stats()).toMatchObject({ queued: 0, sent: 1, dropped: { expired: 1 } })
    expect(onError).toHaveBeenCalledTimes(1)
    expect(onError.mock.calls[0][0].message).toBe('discovery-feedback: click-item: event dropped: older than 7 days')
    // Neither is left in storage for a third page.
    expect(stored()).toEqual([])
  })

  it('drops the oldest beyond its bound, counts and reports them', async () => {
    network({ answer: () => 'offline' })
    const onError = vi.fn()
    const tracker = make({ onError, maxBatchEvents: 10000, flushInterval: 1e9 })
    for (let i = 0; i < MAX_EVENTS + 5; i++) tracker.clickItem(click(String(i)))
    expect(tracker.stats()).toMatchObject({ queued: MAX_EVENTS, dropped: { overflow: 5 } })
    expect(onError.mock.calls.at(-1)[0].message).toContain('dropped: outbox full')
    await Promise.resolve()
    expect(stored()[0].properties.item_id).toBe('5')
  })
})

describe('delivery', () => {
  it('retries a 503 with growing delays until it is accepted, then stops', async () => {
    let down = true
    const net = network({ answer: () => (down ? { status: 503 } : { status: 204 }) })
    vi.spyOn(Math, 'random').mockReturnValue(1)
    const tracker = make()
    tracker.clickItem(click())
    await tracker.flush()
    await settle()
    const times = [Date.now()]
    for (const wait of [1000, 2000, 4000]) {
      vi.advanceTimersByTime(wait - 1)
      await settle()
      expect(net.fetch).toHaveBeenCalledTimes(times.length)
      vi.advanceTimersByTime(1)
      await settle()
      times.push(Date.now())
      expect(net.fetch).toHaveBeenCalledTimes(times.length)
    }
    down = false
    vi.advanceTimersByTime(8000)
    await settle()
    expect(net.events()).toHaveLength(1)
    expect(tracker.stats()).toMatchObject({ queued: 0, sent: 1, retried: 4 })
    vi.advanceTimersByTime(60000)
    await settle()
    expect(net.fetch).toHaveBeenCalledTimes(5)
  })

  it('spreads retries with jitter', async () => {
    const net = network({ answer: () => ({ status: 500 }) })
    vi.spyOn(Math, 'random').mockReturnValue(0)
    const tracker = make()
    tracker.clickItem(click())
    await tracker.flush()
    await settle()
    vi.advanceTimersByTime(500)
    await settle()
    expect(net.fetch).toHaveBeenCalledTimes(2)
  })

  it('waits as long as Retry-After says, in seconds or as a date', async () => {
    const answers = [
      { status: 429, headers: { 'retry-after': '7' } },
      { status: 503, headers: { 'retry-after': new Date(Date.now() + 20000).toUTCString() } },
      { status: 204 }
    ]
    const net = network({ answer: () => answers.shift()! })
    const tracker = make()
    tracker.clickItem(click())
    await tracker.flush()
    await settle()
    vi.advanceTimersByTime(6999)
    await settle()
    expect(net.fetch).toHaveBeenCalledTimes(1)
    vi.advanceTimersByTime(1)
    await settle()
    expect(net.fetch).toHaveBeenCalledTimes(2)
    vi.advanceTimersByTime(12000)
    await settle()
    expect(net.fetch).toHaveBeenCalledTimes(2)
    vi.advanceTimersByTime(9000)
    await settle()
    expect(net.events()).toHaveLength(1)
  })

  it('after a failure, probes a struggling collector with one request per Retry-After step, then sends the backlog several at a time', async () => {
    const started = Date.now()
    const starts: number[] = []
    let inFlight = 0
    let maxInFlightAfterFailure = 0
    let maxInFlightRecovered = 0
    // Down for 7 s, asking for 2 s each time; then healthy, answering after 100 ms.
    const fetch = vi.fn(async () => {
      const at = Date.now() - started
      starts.push(at)
      inFlight++
      if (at > 0) maxInFlightAfterFailure = Math.max(maxInFlightAfterFailure, at < 7000 ? inFlight : 0)
      maxInFlightRecovered = Math.max(maxInFlightRecovered, at >= 7000 ? inFlight : 0)
      const down = at < 7000
      await new Promise((resolve) => setTimeout(resolve, down ? 0 : 100))
      inFlight--
      return new Response(null, { status: down ? 503 : 204, headers: down ? { 'retry-after': '2' } : {} })
    })
    network()
    vi.stubGlobal('fetch', fetch)
    // Bodies of 10 kB: the backlog below fills about ten.
    const tracker = make({ maxBatchBytes: 10000 })
    for (let i = 0; i < 300; i++) tracker.clickItem(click(String(i)))
    await vi.advanceTimersByTimeAsync(6500)
    // The page's first requests failed together; then one probe at about 2, 4 and 6 s.
    expect(starts.filter((at) => at > 0)).toHaveLength(3)
    expect(maxInFlightAfterFailure).toBe(1)
    await vi.advanceTimersByTimeAsync(4000)
    expect(tracker.stats()).toMatchObject({ queued: 0, sent: 300 })
    expect(maxInFlightRecovered).toBeGreaterThan(1)
  })

  it('drops a batch the collector refuses with a 4xx, and reports it', async () => {
    const net = network({ answer: () => ({ status: 400 }) })
    const onError = vi.fn()
    const tracker = make({ onError })
    tracker.clickItem(click())
    tracker.clickItem(click())
    await tracker.flush()
    await settle()
    expect(tracker.stats()).toMatchObject({ queued: 0, sent: 0, dropped: { rejected: 2 } })
    expect(onError.mock.calls[0][0].message).toBe('discovery-feedback: 2 events dropped: refused, the collector answered 400')
    vi.advanceTimersByTime(60000)
    expect(net.fetch).toHaveBeenCalledTimes(1)
  })

  it.each([408, 429, 500])('keeps the events on %i', async (status) => {
    network({ answer: () => ({ status }) })
    const tracker = make()
    tracker.clickItem(click())
    await tracker.flush()
    await settle()
    expect(tracker.stats()).toMatchObject({ queued: 1, retried: 1 })
  })

  it('tries again at once when the browser comes back online', async () => {
    let offline = true
    const net = network({ answer: () => (offline ? 'offline' : { status: 204 }) })
    const tracker = make()
    tracker.clickItem(click())
    await tracker.flush()
    await settle()
    offline = false
    dispatchEvent(new Event('online'))
    await settle()
    expect(net.events()).toHaveLength(1)
  })

  it('never has more than 64 KiB of its own keepalive requests in flight', async () => {
    const answers: ((response: Response) => void)[] = []
    const fetch = vi.fn(() => new Promise<Response>((resolve) => answers.push(resolve)))
    network()
    vi.stubGlobal('fetch', fetch)
    const tracker = make({ maxBatchEvents: 5000 })
    for (let i = 0; i < 1000; i++) tracker.clickItem(click(String(i)))
    tracker.flush()
    const inFlight = () =>
      fetch.mock.calls.slice(answered).reduce((sum, call: any) => sum + (call[1].keepalive ? new TextEncoder().encode(call[1].body).length : 0), 0)
    let answered = 0
    const pending = () => answers.length - answered
    while (pending()) {
      expect(inFlight()).toBeLessThanOrEqual(65536)
      answers[answered++](new Response(null, { status: 204 }))
      await settle()
    }
    expect(tracker.stats()).toMatchObject({ queued: 0, sent: 1000 })
    expect(fetch.mock.calls.length).toBeGreaterThan(4)
  })

  it("reads an answer's body only when the request asked which events the collector lacks", async () => {
    const bodyRead = vi.spyOn(Response.prototype, 'json')
    const net = network({ answer: () => ({ status: 200, body: JSON.stringify({ accepted: 1, missing: [] }) }) })
    const tracker = make()
    tracker.clickItem(click('1'))
    await tracker.flush()
    await settle()
    expect(net.events()).toHaveLength(1)
    expect(bodyRead).not.toHaveBeenCalled()
    // A beacon on the way out, then the question about it: that answer is read.
    tracker.clickItem(click('2'))
    setVisibility('hidden')
    setVisibility('visible')
    vi.advanceTimersByTime(CHECK_AFTER)
    await settle()
    expect(new URL(net.fetch.mock.calls.at(-1)![0]).searchParams.get('unconfirmed')).toBeTruthy()
    expect(bodyRead).toHaveBeenCalledTimes(1)
  })

  it('never resends what a beacon took; asks the collector later and resends only what it lacks', async () => {
    // The collector stored the first beacon but not the second (say it answered 503 to it).
    let lacking: string[] = []
    const net = network({ answer: () => ({ status: 200, body: JSON.stringify({ accepted: 0, missing: lacking }) }) })
    const tracker = make()
    tracker.clickItem(click('1'))
    setVisibility('hidden')
    tracker.clickItem(click('2'))
    setVisibility('hidden')
    expect(net.sendBeacon).toHaveBeenCalledTimes(2)
    const [first, second] = net.events()
    lacking = [second.event_id]
    setVisibility('visible')
    await settle()
    // Nothing goes again by itself: a beacon the browser took counts as delivered.
    expect(net.fetch).not.toHaveBeenCalled()
    expect(tracker.stats().queued).toBe(2)
    vi.advanceTimersByTime(CHECK_AFTER)
    await settle()
    const [url, init] = net.fetch.mock.calls[0]
    expect(new URL(url).searchParams.get('unconfirmed')).toBe([first.event_id, second.event_id].join())
    expect(init.body).toBe('[]')
    await vi.advanceTimersByTimeAsync(1000)
    await settle()
    // Only the event the collector lacks went again, with its own id; then nothing more.
    expect(net.events().map((event) => event.event_id)).toEqual([first.event_id, second.event_id, second.event_id])
    expect(tracker.stats().queued).toBe(0)
    await vi.advanceTimersByTimeAsync(60000)
    expect(net.fetch).toHaveBeenCalledTimes(2)
  })

  it('does not beacon again what a request cancelled on the way out carried: it asks, then resends what is lacking', async () => {
    // Firefox cancels ordinary fetches as the page navigates; the collector may have stored such a request anyway.
    let cancel = () => {}
    let lacking: string[] = []
    const net = network({ answer: () => ({ status: 200, body: JSON.stringify({ accepted: 0, missing: lacking }) }) })
    const reached: string[] = []
    net.fetch.mockImplementationOnce((_url, init) => {
      reached.push(init!.body as string)
      return new Promise((_, reject) => (cancel = () => reject(new TypeError('NetworkError when attempting to fetch resource.'))))
    })
    const tracker = make()
    tracker.clickItem(click('1'))
    tracker.flush()
    setVisibility('hidden')
    cancel()
    await settle()
    setVisibility('hidden')
    expect(net.sendBeacon).not.toHaveBeenCalled()
    const [sent] = JSON.parse(reached[0])
    lacking = [sent.event_id]
    setVisibility('visible')
    await vi.advanceTimersByTimeAsync(CHECK_AFTER)
    await settle()
    await vi.advanceTimersByTimeAsync(1000)
    await settle()
    const asked = net.fetch.mock.calls.map(([url]) => new URL(url as string).searchParams.get('unconfirmed'))
    expect(asked).toContain(sent.event_id)
    expect(net.events().map((event) => event.event_id)).toEqual([sent.event_id])
    expect(tracker.stats().queued).toBe(0)
  })

  it('asks once, not forever, when the collector refuses the question with a 4xx', async () => {
    const net = network({ answer: () => ({ status: 400 }) })
    const onError = vi.fn()
    const tracker = make({ onError })
    tracker.clickItem(click())
    setVisibility('hidden')
    setVisibility('visible')
    await vi.advanceTimersByTimeAsync(30000)
    // The beacon, then one request asking about it: refused, so it counts as delivered.
    expect(net.fetch).toHaveBeenCalledTimes(1)
    expect(tracker.stats().queued).toBe(0)
    expect(onError).not.toHaveBeenCalled()
  })

  it('sends again after a back/forward-cache restore cut short a request that never answers', async () => {
    const net = network()
    // A failure first, so that the page probes with one request at a time; then a request that hangs.
    net.fetch.mockImplementationOnce(() => Promise.resolve(new Response(null, { status: 503 })))
    net.fetch.mockImplementationOnce(() => new Promise<Response>(() => {}))
    const tracker = make()
    tracker.clickItem(click('1'))
    await tracker.flush()
    await vi.advanceTimersByTimeAsync(1000)
    expect(net.fetch).toHaveBeenCalledTimes(2)
    dispatchEvent(new PageTransitionEvent('pagehide', { persisted: true }))
    dispatchEvent(new PageTransitionEvent('pageshow', { persisted: true }))
    tracker.clickItem(click('2'))
    await vi.advanceTimersByTimeAsync(1000)
    expect(net.events().map((event) => event.properties.item_id)).toContain('2')
  })

  it('counts what a beacon took as delivered when the collector does not answer which it lacks', async () => {
    const net = network()
    const tracker = make()
    tracker.clickItem(click())
    setVisibility('hidden')
    setVisibility('visible')
    await vi.advanceTimersByTimeAsync(CHECK_AFTER)
    await settle()
    expect(net.fetch).toHaveBeenCalledTimes(1)
    expect(tracker.stats().queued).toBe(0)
    expect(net.events()).toHaveLength(1)
  })

  it('keeps at most six requests in flight and sends no partial batch on an answer', async () => {
    const answers: (() => void)[] = []
    const fetch = vi.fn(() => new Promise<Response>((resolve) => answers.push(() => resolve(new Response(null, { status: 204 })))))
    network()
    vi.stubGlobal('fetch', fetch)
    const tracker = make()
    // 300 clicks, one per task, while the collector takes its time.
    for (let i = 0; i < 300; i++) {
      tracker.clickItem(click(String(i)))
      await vi.advanceTimersByTimeAsync(1)
      expect(answers.length).toBeLessThanOrEqual(6)
    }
    expect(fetch).toHaveBeenCalledTimes(6)
    const bodies = () => fetch.mock.calls.map((call: any) => JSON.parse(call[1].body).length)
    while (answers.length) {
      answers.shift()!()
      await vi.advanceTimersByTimeAsync(1)
    }
    await vi.advanceTimersByTimeAsync(1000)
    while (answers.length) {
      answers.shift()!()
      await vi.advanceTimersByTimeAsync(1)
    }
    expect(bodies().reduce((sum: number, count: number) => sum + count, 0)).toBe(300)
    expect(fetch.mock.calls.length).toBeLessThanOrEqual(20)
    // Every request but the last carried a full batch: an answer never sends a straggler.
    expect(
      bodies()
        .slice(0, -1)
        .every((count: number) => count >= 20)
    ).toBe(true)
    expect(tracker.stats()).toMatchObject({ queued: 0, sent: 300 })
  })
})

describe('fuzz', () => {
  it('survives 10,000 random calls: no exception escapes, each valid event queued once, each invalid reported', async () => {
    network({ answer: () => 'offline' })
    let seed = 42
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648
    const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)]
    const values = (): unknown =>
      pick([undefined, null, '', 'x', '42', 'a'.repeat(300), 0, -1, 1, 2.5, NaN, Infinity, true, [], {}, [1], { a: 1 }, Symbol('s'), () => 1, 10 ** 21])
    const line = () =>
      random() < 0.7
        ? { item_id: '1', variant_item_id: '1', unit_price: 9.5, quantity: 1 }
        : { item_id: values(), variant_item_id: values(), unit_price: values(), quantity: values() }
    const good: Record<string, () => Record<string, unknown>> = {
      'click-suggestion': () => ({ rid: 'a-1', suggestion: 's' }),
      'click-item': () => ({ item_id: '1', variant_item_id: '1' }),
      redirect: () => ({ rid: 'a-1', suggestion: 's' }),
      purchase: () => ({ order_id: 'o', currency: 'EUR', revenue: 1, line_items: [line()] }),
      'update-cart': () => ({ line_items: [line(), line()] }),
      'add-to-cart': () => ({ item_id: '1', variant_item_id: '1', quantity: 1, rid: 'r' }),
      'view-page': () => ({})
    }
    const names = [...Object.keys(good), 'nope', '', 'CLICK-ITEM', 'constructor', '__proto__']
    const onError = vi.fn()
    const tracker = make({ onError, maxBatchEvents: 1e9, flushInterval: 1e9 })
    let accepted = 0
    let expectedErrors = 0
    for (let i = 0; i < 10000; i++) {
      const name = pick(names)
      let properties: unknown = Object.hasOwn(good, name) ? good[name]() : {}
      if (random() < 0.5)
        properties = random() < 0.3 ? values() : { ...(properties as object), [pick(Object.keys(properties as object).concat('extra'))]: values() }
      const before = tracker.stats()
      const errorsBefore = onError.mock.calls.length
      expect(() => tracker.track(name as never, properties as never)).not.toThrow()
      const after = tracker.stats()
      const added = after.queued - before.queued + after.dropped.overflow - before.dropped.overflow
      const invalid = after.dropped.invalid - before.dropped.invalid
      // Exactly one outcome: queued (two events for add-to-cart), or refused and reported once.
      expect([added, invalid]).toEqual(invalid ? [0, 1] : [name == 'add-to-cart' ? 2 : 1, 0])
      expect(onError.mock.calls.length - errorsBefore).toBe(invalid + after.dropped.overflow - before.dropped.overflow)
      if (invalid) expectedErrors++
      else accepted += added
    }
    expect(accepted).toBeGreaterThan(1000)
    expect(expectedErrors).toBeGreaterThan(1000)
    expect(tracker.stats()).toMatchObject({
      queued: Math.min(accepted, MAX_EVENTS),
      dropped: { invalid: expectedErrors, overflow: Math.max(0, accepted - MAX_EVENTS) }
    })
    const net = network()
    await tracker.flush()
    await settle()
    const sent = net.events()
    expect(sent).toHaveLength(Math.min(accepted, MAX_EVENTS))
    // Each event has an id of its own, except purchases: one id per order, however often tracked.
    const key = (event: Envelope) => (event.event == 'purchase' ? 'order ' + (event.properties as { order_id: string }).order_id : event.event_id)
    const ids = new Set(sent.map((event) => event.event_id))
    expect(ids.size).toBe(new Set(sent.map(key)).size)
  })
})
