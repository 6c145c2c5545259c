// @vitest-environment node
import { execFileSync } from 'node:child_process'
import { setTimeout as later } from 'node:timers'
import { setTimeout as pause } from 'node:timers/promises'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { identityCookie } from '../../src/server'

describe('identityCookie (discovery-feedback/server)', () => {
  it('renews the uid the browser already has, for 400 days, SameSite=Lax, Secure, readable by the page', () => {
    const { uid, setCookie } = identityCookie('theme=dark; df_uid=V1StGXR8_Z5jdHi6B-myT; df_sid=abc')
    expect(uid).toBe('V1StGXR8_Z5jdHi6B-myT')
    expect(setCookie).toBe('df_uid=V1StGXR8_Z5jdHi6B-myT; Path=/; Max-Age=34560000; SameSite=Lax; Secure')
    expect(setCookie).not.toMatch(/HttpOnly/i)
  })

  it.each([undefined, '', 'df_uid=', 'df_uid=' + 'x'.repeat(33), 'df_uid=a%20b', 'df_uid=%E0%A4%A', 42, {}, ['df_uid=abc']])(
    'makes a new uid for %o',
    (header) => {
      const { uid, setCookie } = identityCookie(header)
      expect(uid).toMatch(/^[\w-]{21}$/)
      expect(setCookie.startsWith('df_uid=' + uid + ';')).toBe(true)
    }
  )

  it('takes a domain, a shorter life and plain http for development', () => {
    expect(identityCookie('df_uid=abc', { domain: 'shop.example', days: 30, secure: false }).setCookie).toBe(
      'df_uid=abc; Path=/; Max-Age=2592000; SameSite=Lax; Domain=shop.example'
    )
    expect(identityCookie('df_uid=abc', { days: 1000 }).setCookie).toContain('Max-Age=34560000')
  })

  it('loads in plain Node by its export name', () => {
    const out = execFileSync(
      process.execPath,
      ['--input-type=module', '-e', "import { identityCookie } from 'discovery-feedback/server'; console.log(identityCookie('df_uid=abc').uid)"],
      { encoding: 'utf8' }
    )
    expect(out.trim()).toBe('abc')
    const cjs = execFileSync(process.execPath, ['-e', "console.log(require('discovery-feedback/server').identityCookie('df_uid=abc').uid)"], {
      encoding: 'utf8'
    })
    expect(cjs.trim()).toBe('abc')
  })
})

describe('createServerTracker (discovery-feedback/server)', () => {
  const shopper = { uid: 'V1StGXR8_Z5jdHi6B-myT', sid: 'Uakgb_J5m9g-0JDMbcJqL', ip: '203.0.113.9', ua: 'Mozilla/5.0 (iPhone)' }
  const order = {
    order_id: 'o-1',
    currency: 'EUR',
    revenue: 19.9,
    line_items: [{ item_id: '42', variant_item_id: '421', unit_price: 19.9, quantity: 1 }]
  }

  async function collector(statuses: number[]) {
    const { createServer } = await import('node:http')
    const bodies: { url: string; events: any[] }[] = []
    const server = createServer((request, response) => {
      let body = ''
      request.on('data', (chunk) => (body += chunk))
      request.on('end', () => {
        const status = statuses.shift() ?? 200
        if (status == 200) bodies.push({ url: request.url!, events: JSON.parse(body) })
        response.writeHead(status, status == 503 ? { 'retry-after': '0.05' } : {}).end('{}')
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    return { url: `http://127.0.0.1:${(server.address() as any).port}/v3/feedback`, bodies, close: () => server.close() }
  }

  it('sends an add-to-cart with the click-item SPEC sends along with it, the click first, under the same shopper', async () => {
    const { createServerTracker } = await import('../../src/server')
    const target = await collector([])
    const tracker = createServerTracker({ key: 'KEY', endpoint: target.url })
    tracker.track('add-to-cart', { item_id: '42', variant_item_id: '421', quantity: 2, rid: 'rec-1' }, shopper)
    await tracker.flush()
    target.close()
    const events = target.bodies.flatMap((body) => body.events)
    expect(events.map((event) => [event.event, event.properties])).toEqual([
      ['click-item', { rid: 'rec-1', item_id: '42', variant_item_id: '421' }],
      ['add-to-cart', { item_id: '42', variant_item_id: '421', quantity: 2, rid: 'rec-1' }]
    ])
    expect(events.every((event) => event.user.uid == shopper.uid && event.user.ip == shopper.ip)).toBe(true)
    expect(tracker.stats()).toMatchObject({ sent: 2 })
  })

  it("sends a purchase from a webhook with the shopper's ip and ua, batched, retrying a 503", async () => {
    const { createServerTracker } = await import('../../src/server')
    const target = await collector([503])
    const tracker = createServerTracker({ key: 'KEY', endpoint: target.url })
    tracker.track('purchase', order, shopper)
    tracker.track('update-cart', { line_items: [] }, shopper)
    await tracker.flush()
    target.close()
    expect(target.bodies).toHaveLength(1)
    expect(target.bodies[0].url).toMatch(/\?t_sent=\d+$/)
    expect(target.bodies[0].events.map((event) => [event.event, event.user])).toEqual([
      ['purchase', shopper],
      ['update-cart', shopper]
    ])
    expect(target.bodies[0].events[0]).toMatchObject({ key: 'KEY', properties: order, event_id: expect.any(String) })
  })

  it.each([
    [{ ...shopper, uid: undefined }, 'discovery-feedback: purchase: user.uid is required on the server'],
    [{ ...shopper, sid: undefined }, 'discovery-feedback: purchase: user.sid is required on the server'],
    [{ ...shopper, sid: '' }, 'discovery-feedback: purchase: user.sid must be a string of 1 to 32 characters'],
    [{ ...shopper, ip: undefined }, 'discovery-feedback: purchase: user.ip is required on the server'],
    [{ ...shopper, uid: 'x'.repeat(40) }, 'discovery-feedback: purchase: user.uid must be a string of 1 to 32 characters']
  ])('says clearly what is missing: %o', async (user, message) => {
    const { createServerTracker } = await import('../../src/server')
    const tracker = createServerTracker({ key: 'KEY', endpoint: 'http://127.0.0.1:9/' })
    expect(() => tracker.track('purchase', order, user as never)).toThrow(message)
  })

  it("applies the browser's rules to properties", async () => {
    const { createServerTracker } = await import('../../src/server')
    const tracker = createServerTracker({ key: 'KEY', endpoint: 'http://127.0.0.1:9/' })
    expect(() => tracker.track('purchase', { ...order, revenue: '19.90' } as never, shopper)).toThrow(
      'discovery-feedback: purchase: revenue must be a finite number, got string'
    )
  })

  it('gives up a batch the collector refuses, and reports it', async () => {
    const { createServerTracker } = await import('../../src/server')
    const target = await collector([400])
    const errors: string[] = []
    const tracker = createServerTracker({ key: 'KEY', endpoint: target.url, onError: (error) => errors.push(error.message) })
    tracker.track('purchase', order, shopper)
    await tracker.close()
    target.close()
    expect(errors).toEqual(['discovery-feedback: 1 event dropped: the collector answered 400'])
    expect(tracker.stats()).toEqual({ queued: 0, sent: 0, retried: 0, dropped: { invalid: 0, too_large: 0, rejected: 1, overflow: 0, undelivered: 0 } })
  })
})

describe('createServerTracker when the collector struggles (real HTTP)', () => {
  const shopper = { uid: 'u-1', sid: 's-1', ip: '203.0.113.9', ua: 'Mozilla/5.0' }
  const click = (n: number) => ({ item_id: 'item-' + n, variant_item_id: 'v-' + n })
  type Answer = [status: number, headers?: Record<string, string>] | 'hang'

  afterEach(() => {
    vi.useRealTimers()
    vi.unstubAllGlobals()
    vi.restoreAllMocks()
  })

  /**
   * A collector that answers after `latency` ms with what `answer` says, and counts what it sees.
   * It keeps the real clock (node:timers) when a test fakes the sender's.
   */
  async function collector(answer: (index: number) => Answer, latency = 0) {
    const { createServer } = await import('node:http')
    const stored: string[] = []
    const starts: number[] = []
    let inFlight = 0
    let maxInFlight = 0
    const server = createServer((request, response) => {
      const index = starts.push(Date.now()) - 1
      inFlight++
      maxInFlight = Math.max(maxInFlight, inFlight)
      let body = ''
      request.on('data', (chunk) => (body += chunk))
      request.on('close', () => inFlight--)
      request.on('end', () => {
        const what = answer(index)
        if (what == 'hang') return
        later(() => {
          if (what[0] == 200) stored.push(...JSON.parse(body).map((event: any) => event.properties.item_id))
          response.writeHead(what[0], what[1]).end()
        }, latency)
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    return {
      url: `http://127.0.0.1:${(server.address() as any).port}/v3/feedback`,
      stored,
      starts,
      maxInFlight: () => maxInFlight,
      close: () => {
        server.closeAllConnections()
        server.close()
      }
    }
  }

  /**
   * Fakes the sender's clock (Date, setTimeout), so that a test moves it step by step while the
   * HTTP requests stay real. Returns the fake time at which each request started, taken where the
   * sender calls fetch, and how many requests it has in flight at most.
   */
  function fakeClock() {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] })
    const realFetch = globalThis.fetch
    const sent = { starts: [] as number[], inFlight: 0, most: 0 }
    vi.stubGlobal('fetch', (url: string, init: RequestInit) => {
      sent.starts.push(Date.now())
      sent.most = Math.max(sent.most, ++sent.inFlight)
      return realFetch(url, init).finally(() => sent.inFlight--)
    })
    return sent
  }

  /** Waits on the real clock, while the fake one stands still, until the HTTP exchanges let `check` hold. */
  async function until(check: () => boolean, what: string) {
    const end = performance.now() + 10000
    while (!check()) {
      if (performance.now() > end) throw new Error('timed out waiting for ' + what)
      await pause(5)
    }
  }

  it('healthy but slow (50 ms): 20,000 events in few, full requests, at most 4 in flight, each event once', async () => {
    const { createServerTracker } = await import('../../src/server')
    const target = await collector(() => [200], 50)
    const tracker = createServerTracker({ key: 'KEY', endpoint: target.url })
    for (let n = 0; n < 20000; n++) tracker.track('click-item', click(n), shopper)
    await tracker.close()
    target.close()
    expect(target.maxInFlight()).toBeLessThanOrEqual(4)
    // About 60 KiB each: events that waited for a free slot went together.
    expect(target.starts.length).toBeLessThanOrEqual(150)
    expect(target.stored).toHaveLength(20000)
    expect(new Set(target.stored).size).toBe(20000)
    expect(tracker.stats()).toMatchObject({ queued: 0, sent: 20000, retried: 0 })
  })

  it.each([
    ['0.5', 500],
    ['2', 2000]
  ])(
    '503 with Retry-After: %s — one backoff for the whole sender, one request per step until the collector is back, then several at once, everything once',
    async (retryAfter, stepMs) => {
      const { createServerTracker } = await import('../../src/server')
      const sent = fakeClock()
      let overloaded = true
      const target = await collector(() => (overloaded ? [503, { 'retry-after': retryAfter }] : [200]), 20)
      const tracker = createServerTracker({ key: 'KEY', endpoint: target.url })
      for (let n = 0; n < 5000; n++) tracker.track('click-item', click(n), shopper)
      // Three steps while overloaded: each starts one request, and none starts until the
      // collector's Retry-After has passed, however many events wait.
      for (let step = 1; step <= 3; step++) {
        expect(sent.starts).toHaveLength(step)
        const retried = tracker.stats().retried
        await until(() => tracker.stats().retried > retried, 'the 503 of step ' + step)
        await vi.advanceTimersByTimeAsync(stepMs - 1)
        expect(sent.starts).toHaveLength(step)
        if (step == 3) overloaded = false
        await vi.advanceTimersByTimeAsync(1)
      }
      // The fourth step's probe is taken; what waits then goes several requests at once.
      const flushed = tracker.flush()
      await until(() => tracker.stats().sent == 5000, 'every event stored')
      await flushed
      target.close()
      expect(sent.starts.slice(0, 4)).toEqual([0, 1, 2, 3].map((step) => sent.starts[0] + step * stepMs))
      // Everything after the probe started at the probe's time: no further wait.
      expect(new Set(sent.starts.slice(3))).toEqual(new Set([sent.starts[3]]))
      expect(sent.starts.length).toBeGreaterThan(5)
      expect(sent.most).toBe(4)
      expect(new Set(target.stored).size).toBe(5000)
      expect(target.stored).toHaveLength(5000)
      expect(tracker.stats()).toMatchObject({ queued: 0, sent: 5000, dropped: { undelivered: 0 } })
    }
  )

  it('503 without Retry-After: exponential backoff with jitter from one second', async () => {
    const { createServerTracker } = await import('../../src/server')
    // The jitter at its lowest, so the wait is known: half of each step, 500 ms then 1,000 ms.
    vi.spyOn(Math, 'random').mockReturnValue(0)
    const sent = fakeClock()
    const target = await collector((index) => (index < 2 ? [503] : [200]))
    const tracker = createServerTracker({ key: 'KEY', endpoint: target.url })
    for (let n = 0; n < 1000; n++) tracker.track('click-item', click(n), shopper)
    for (const [step, wait] of [
      [1, 500],
      [2, 1000]
    ]) {
      const retried = tracker.stats().retried
      await until(() => tracker.stats().retried > retried, 'the 503 of step ' + step)
      await vi.advanceTimersByTimeAsync(wait - 1)
      expect(sent.starts).toHaveLength(step)
      await vi.advanceTimersByTimeAsync(1)
      expect(sent.starts).toHaveLength(step + 1)
    }
    const flushed = tracker.flush()
    await until(() => tracker.stats().sent == 1000, 'every event stored')
    await flushed
    target.close()
    // Without the jitter the waits would be 1 s and 2 s; from 2 s, 1 s and 2 s at the lowest.
    expect(sent.starts.slice(0, 3).map((at) => at - sent.starts[0])).toEqual([0, 500, 1500])
    expect(new Set(target.stored).size).toBe(1000)
  })

  it('a collector that never answers: requests time out, close() resolves by its timeout and reports what it gave up', async () => {
    const { createServerTracker } = await import('../../src/server')
    fakeClock()
    const target = await collector(() => 'hang')
    const errors: string[] = []
    const tracker = createServerTracker({ key: 'KEY', endpoint: target.url, requestTimeout: 200, onError: (error) => errors.push(error.message) })
    for (let n = 0; n < 300; n++) tracker.track('click-item', click(n), shopper)
    let flushed = false
    tracker.flush({ timeout: 300 }).then(() => (flushed = true))
    await vi.advanceTimersByTimeAsync(299)
    expect(flushed).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    expect(flushed).toBe(true)
    expect(tracker.stats().queued).toBe(300) // flush gives nothing up
    let closed = false
    tracker.close({ timeout: 500 }).then(() => (closed = true))
    await vi.advanceTimersByTimeAsync(499)
    expect(closed).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    expect(closed).toBe(true)
    target.close()
    expect(tracker.stats()).toMatchObject({ queued: 0, sent: 0, dropped: { undelivered: 300 } })
    expect(errors.at(-1)).toBe('discovery-feedback: 300 events dropped: close() ran out of time after 500 ms')
    expect(() => tracker.track('click-item', click(1), shopper)).toThrow('discovery-feedback: click-item: was tracked after close()')
  })

  it('close() out of time while a wrapped fetch settles late after its abort: each event is counted once, as dropped', async () => {
    const { createServerTracker } = await import('../../src/server')
    // A fetch wrapped by a monitoring agent that reports its abort a while after it happened.
    vi.stubGlobal(
      'fetch',
      (_url: string, init: RequestInit) =>
        new Promise((_resolve, reject) => init.signal!.addEventListener('abort', () => setTimeout(() => reject(new Error('aborted')), 200)))
    )
    try {
      const tracker = createServerTracker({ key: 'KEY', endpoint: 'http://127.0.0.1:9/', onError: () => {} })
      for (let n = 0; n < 120; n++) tracker.track('click-item', click(n), shopper)
      await tracker.close({ timeout: 100 })
      expect(tracker.stats()).toMatchObject({ queued: 0, sent: 0, dropped: { undelivered: 120 } })
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(tracker.stats()).toMatchObject({ queued: 0, sent: 0, retried: 0, dropped: { undelivered: 120 } })
    } finally {
      vi.unstubAllGlobals()
    }
  })

  it('bounded memory: beyond maxQueuedEvents the oldest are dropped, counted and reported once per burst', async () => {
    const { createServerTracker } = await import('../../src/server')
    const target = await collector(() => [503, { 'retry-after': '60' }])
    const errors: string[] = []
    const tracker = createServerTracker({ key: 'KEY', endpoint: target.url, maxQueuedEvents: 1000, onError: (error) => errors.push(error.message) })
    for (let n = 0; n < 50000; n++) tracker.track('click-item', click(n), shopper)
    await new Promise((resolve) => setTimeout(resolve, 100))
    const { queued, dropped } = tracker.stats()
    // At most the bound waits, plus what the first requests carried before the 503s.
    expect(queued).toBeLessThanOrEqual(1000 + 4 * 250)
    expect(dropped.overflow + queued).toBe(50000)
    expect(errors.filter((message) => message.includes('waited for the collector')).length).toBeLessThanOrEqual(2)
    await tracker.close({ timeout: 100 })
    target.close()
  })

  it('gives an event up after maxAttempts failed tries and reports it', async () => {
    const { createServerTracker } = await import('../../src/server')
    const target = await collector(() => [503, { 'retry-after': '0' }])
    const errors: string[] = []
    const tracker = createServerTracker({ key: 'KEY', endpoint: target.url, maxAttempts: 3, onError: (error) => errors.push(error.message) })
    tracker.track('click-item', click(1), shopper)
    await tracker.flush()
    target.close()
    expect(target.starts).toHaveLength(3)
    expect(errors).toEqual(['discovery-feedback: 1 event dropped: the collector answered 503 3 times'])
    expect(tracker.stats()).toMatchObject({ queued: 0, retried: 2, dropped: { undelivered: 1 } })
  })
})
