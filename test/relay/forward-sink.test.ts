// @vitest-environment node
import type { IncomingMessage, ServerResponse } from 'node:http'
import { setTimeout as pause } from 'node:timers/promises'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { forwardSink, SinkRefusal, SinkUnavailable, type DeadLetter, type Relay, type RelayEvent } from '../../src/relay'
import { startServiceStandIn } from '../support/service-stand-in'
import { waitFor } from '../support/wait'
import { bodyOf, envelope, read, serve } from './support'

// forwardSink against a real HTTP server standing for the service: what it receives, how many
// requests at once, and what the relay's callers are told when it fails.

type Answer = { status: number; headers?: Record<string, string> } | 'hang'

async function service() {
  const received: { events: any[]; headers: IncomingMessage['headers'] }[] = []
  let inFlight = 0
  let most = 0
  let answer: () => Answer = () => ({ status: 200 })
  let held: (() => void)[] = []
  let holding = false
  const started = await serve(async (request: IncomingMessage, response: ServerResponse) => {
    inFlight++
    most = Math.max(most, inFlight)
    const body = await bodyOf(request)
    received.push({ events: JSON.parse(body), headers: request.headers })
    if (holding) await new Promise<void>((resolve) => held.push(resolve))
    const decided = answer()
    if (decided == 'hang') return
    inFlight--
    response.writeHead(decided.status, decided.headers).end('{}')
  })
  return {
    url: started.origin + '/v3/events',
    received,
    most: () => most,
    inFlight: () => inFlight,
    answer: (next: () => Answer) => {
      answer = next
    },
    hold: () => {
      holding = true
    },
    release: () => {
      holding = false
      held.splice(0).forEach((resolve) => resolve())
      held = []
    },
    close: started.close
  }
}

const running: Awaited<ReturnType<typeof service>>[] = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((started) => started.close()))
})
const start = async () => {
  const started = await service()
  running.push(started)
  return started
}

const relayEvent = (overrides: Record<string, unknown> = {}): RelayEvent =>
  ({ ...envelope(), user: { uid: 'u', sid: 's', ip: '198.51.100.23' }, received_at: 1767261605000, t_corrected: 1767261604000, ...overrides }) as RelayEvent

/**
 * Fakes the sink's clock, so that a test moves it in steps while the HTTP stays real: Date,
 * setTimeout, and AbortSignal.timeout, which Node runs on a timer of its own that fake timers do
 * not reach; here it aborts as Node's does, from a (fake) setTimeout.
 */
function fakeClock() {
  vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] })
  vi.spyOn(AbortSignal, 'timeout').mockImplementation((ms) => {
    const controller = new AbortController()
    setTimeout(() => controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), ms)
    return controller.signal
  })
}
afterEach(() => {
  vi.useRealTimers()
  vi.restoreAllMocks()
})

/** Waits on the real clock, while a fake one stands still, until the HTTP exchanges let `check` hold. */
async function until(check: () => boolean, what: string) {
  const end = performance.now() + 10000
  while (!check()) {
    if (performance.now() > end) throw new Error('timed out waiting for ' + what)
    await pause(5)
  }
}

/** Settles a promise into what the caller saw, so several can be awaited together. */
const outcome = (promise: Promise<void>) =>
  promise.then(
    () => 'ok' as const,
    (error: Error) => error
  )

describe("forwardSink, format: 'batch' (a collector of this package's protocol)", () => {
  it("forwards arrays of envelopes with their event ids: t_client corrected, the relay's times taken out, the key replaced when given", async () => {
    const target = await start()
    const sink = forwardSink({ url: target.url, format: 'batch', key: 'SERVICE-KEY', headers: { authorization: 'Bearer s3cret' } })
    const event = relayEvent()
    await sink([event])
    expect(target.received).toHaveLength(1)
    const [{ events, headers }] = target.received
    const { received_at: _, t_corrected: __, ...spec } = event
    expect(events).toEqual([{ ...spec, key: 'SERVICE-KEY', t_client: 1767261604000 }])
    expect(headers['content-type']).toBe('application/json')
    expect(headers.authorization).toBe('Bearer s3cret')
    // The caller's event is untouched.
    expect(event.key).toBe('KEY')
  })

  it('keeps each event’s own key when none is given', async () => {
    const target = await start()
    await forwardSink({ url: target.url, format: 'batch' })([relayEvent({ key: 'SHOP-A' }), relayEvent({ key: 'SHOP-B' })])
    expect(target.received[0].events.map((event) => event.key)).toEqual(['SHOP-A', 'SHOP-B'])
  })

  it('batches calls that arrive while a request is in flight into one request, each call resolved once its events are answered', async () => {
    const target = await start()
    const sink = forwardSink({ url: target.url, format: 'batch', maxInFlight: 1 })
    target.hold()
    const first = sink([relayEvent({ event_id: 'first' })])
    await waitFor(() => target.received.length == 1, 'the first request')
    const later = Array.from({ length: 5 }, (_, index) => sink([relayEvent({ event_id: 'later-' + index }), relayEvent({ event_id: 'more-' + index })]))
    let settled = 0
    later.forEach((call) => call.then(() => settled++))
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(target.received).toHaveLength(1)
    expect(settled).toBe(0)
    target.release()
    await Promise.all([first, ...later])
    expect(target.received.map(({ events }) => events.length)).toEqual([1, 10])
    expect(target.received[1].events.map((event) => event.event_id)).toEqual(
      Array.from({ length: 5 }, (_, index) => ['later-' + index, 'more-' + index]).flat()
    )
  })

  it('keeps at most maxInFlight requests open; what waits goes together', async () => {
    const target = await start()
    const sink = forwardSink({ url: target.url, format: 'batch', maxInFlight: 3 })
    // The first request probes alone (nothing is known of the service yet).
    await sink([relayEvent()])
    target.hold()
    const calls = Array.from({ length: 12 }, (_, index) => sink([relayEvent({ event_id: 'e' + index })]))
    await waitFor(() => target.received.length == 4, 'three requests after the probe')
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(target.inFlight()).toBe(3)
    target.release()
    await Promise.all(calls)
    expect(target.most()).toBe(3)
    // Three went one call each; the other nine waited and went in one request.
    expect(target.received.slice(1).map(({ events }) => events.length)).toEqual([1, 1, 1, 9])
    expect(
      target.received
        .slice(1)
        .flatMap(({ events }) => events.map((event) => event.event_id))
        .sort()
    ).toEqual(Array.from({ length: 12 }, (_, index) => 'e' + index).sort())
  })

  it('a 503: every waiting call rejects with SinkUnavailable and the Retry-After, new calls too, until it passes', async () => {
    const target = await start()
    const sink = forwardSink({ url: target.url, format: 'batch', maxInFlight: 1 })
    target.hold()
    target.answer(() => ({ status: 503, headers: { 'retry-after': '2' } }))
    const inFlight = outcome(sink([relayEvent()]))
    await waitFor(() => target.received.length == 1, 'the request')
    const waiting = [outcome(sink([relayEvent()])), outcome(sink([relayEvent(), relayEvent()]))]
    target.release()
    const seen = await Promise.all([inFlight, ...waiting])
    for (const error of seen) {
      expect(error).toBeInstanceOf(SinkUnavailable)
      expect((error as SinkUnavailable).retryAfterMs).toBeGreaterThan(1800)
      expect((error as SinkUnavailable).retryAfterMs).toBeLessThanOrEqual(2000)
    }
    // The waiting calls never reached the service.
    expect(target.received).toHaveLength(1)
    const meanwhile = await outcome(sink([relayEvent()]))
    expect(meanwhile).toBeInstanceOf(SinkUnavailable)
    expect(target.received).toHaveLength(1)
  })

  it('after a failure it probes with one request at a time, then opens up again once one succeeds', async () => {
    const target = await start()
    const sink = forwardSink({ url: target.url, format: 'batch', maxInFlight: 4 })
    await sink([relayEvent()])
    target.answer(() => ({ status: 503, headers: { 'retry-after': '1' } }))
    expect(await outcome(sink([relayEvent()]))).toBeInstanceOf(SinkUnavailable)
    await new Promise((resolve) => setTimeout(resolve, 1050))
    target.answer(() => ({ status: 200 }))
    target.hold()
    const before = target.received.length
    const calls = Array.from({ length: 4 }, (_, index) => sink([relayEvent({ event_id: 'p' + index })]))
    await waitFor(() => target.received.length == before + 1, 'the probe')
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(target.inFlight()).toBe(1)
    target.release()
    await Promise.all(calls)
    // The probe, then the three that waited, together.
    expect(target.received.slice(before).map(({ events }) => events.length)).toEqual([1, 3])
  })

  it('a service that does not answer in time: SinkUnavailable after the timeout, with a backoff to wait', async () => {
    fakeClock()
    const target = await start()
    target.answer(() => 'hang')
    const sink = forwardSink({ url: target.url, format: 'batch', timeout: 300 })
    let error: unknown
    outcome(sink([relayEvent()])).then((result) => (error = result))
    await until(() => target.received.length == 1, 'the request at the service')
    await vi.advanceTimersByTimeAsync(299)
    expect(error).toBeUndefined()
    await vi.advanceTimersByTimeAsync(1)
    await until(() => error !== undefined, 'the call to settle')
    expect(error).toBeInstanceOf(SinkUnavailable)
    // The first step of the backoff: 1 s with jitter, half to all of it.
    expect((error as SinkUnavailable).retryAfterMs).toBeGreaterThan(400)
    expect((error as SinkUnavailable).retryAfterMs).toBeLessThanOrEqual(1000)
  })

  it('a call that waits a whole timeout for a free request is given up, so no call outlasts two timeouts (the relay’s claims outlast that)', async () => {
    fakeClock()
    const target = await start()
    // A slow service that still answers within the timeout, and events of 40 KB: one a request.
    target.answer(() => ({ status: 200 }))
    const sink = forwardSink({ url: target.url, format: 'batch', timeout: 2400, maxInFlight: 1 })
    target.hold()
    const large = () => relayEvent({ properties: { item_id: 'x'.repeat(40000), variant_item_id: 'v' } })
    const results: Record<string, unknown> = {}
    for (const name of ['first', 'second', 'third']) outcome(sink([large()])).then((result) => (results[name] = result))
    await until(() => target.received.length == 1, 'the first request')
    // The service answers the first after 1,600 ms, well within the 2,400 ms timeout; the second
    // goes then, and the third would wait for its answer, 800 ms past the timeout.
    await vi.advanceTimersByTimeAsync(1600)
    target.release()
    target.hold()
    await until(() => results.first !== undefined && target.received.length == 2, 'the first answer and the second request')
    expect(results.first).toBe('ok')
    await vi.advanceTimersByTimeAsync(799)
    expect(results.third).toBeUndefined()
    await vi.advanceTimersByTimeAsync(1)
    // Given up at the timeout, while the second is still in flight.
    await until(() => results.third !== undefined, 'the third call to settle')
    expect(results.third).toBeInstanceOf(SinkUnavailable)
    expect((results.third as Error).message).toBe('no request was free for 2400 ms')
    expect(results.second).toBeUndefined()
    target.release()
    await until(() => results.second !== undefined, 'the second answer')
    expect(results.second).toBe('ok')
    // The third never reached the service.
    expect(target.received).toHaveLength(2)
  })

  it('a service refusing the batch (4xx) rejects with a plain error, and the next call goes through at once', async () => {
    const target = await start()
    const sink = forwardSink({ url: target.url, format: 'batch' })
    target.answer(() => ({ status: 400 }))
    const error = await outcome(sink([relayEvent()]))
    expect(error).toBeInstanceOf(Error)
    expect(error).not.toBeInstanceOf(SinkUnavailable)
    expect((error as Error).message).toBe('the service refused the batch: 400')
    target.answer(() => ({ status: 202 }))
    expect(await outcome(sink([relayEvent()]))).toBe('ok')
  })

  it('splits a backlog into bodies of at most 60 KiB', async () => {
    const target = await start()
    const sink = forwardSink({ url: target.url, format: 'batch', maxInFlight: 1 })
    await sink([relayEvent()])
    const big = Array.from({ length: 300 }, (_, index) =>
      relayEvent({ event_id: 'big-' + index, properties: { item_id: 'x'.repeat(400), variant_item_id: 'v' } })
    )
    await sink(big)
    const bodies = target.received.slice(1)
    expect(bodies.length).toBeGreaterThan(1)
    for (const { events } of bodies) expect(Buffer.byteLength(JSON.stringify(events))).toBeLessThanOrEqual(61440)
    expect(bodies.flatMap(({ events }) => events.map((event) => event.event_id))).toEqual(big.map((event) => event.event_id))
  })
})

describe("a relay batch that spans several forwarded requests, format: 'batch'", () => {
  it('marks what got through before a 503, so the resend does not double it at the service', async () => {
    const { createRelay } = await import('../../src/relay')
    const target = await start()
    let requests = 0
    target.answer(() => (++requests == 2 ? { status: 503, headers: { 'retry-after': '1' } } : { status: 200 }))
    const relay = createRelay({ keys: ['KEY'], sink: forwardSink({ url: target.url, format: 'batch', maxInFlight: 1 }), maxBodyBytes: 1 << 20 })
    // 200 events of about 500 bytes: several 60 KiB bodies.
    const events = Array.from({ length: 200 }, (_, index) =>
      envelope({ event_id: 'e-' + index, properties: { item_id: 'x'.repeat(400) + index, variant_item_id: 'v' } })
    )
    const post = () => relay.fetch(new Request('http://shop.test/df/events', { method: 'POST', body: JSON.stringify(events) }))
    expect((await post()).status).toBe(503)
    await new Promise((resolve) => setTimeout(resolve, 1100))
    expect((await post()).status).toBe(200)
    // What the service stored: every request but the one it answered 503.
    const counts = new Map<string, number>()
    const stored = target.received.filter((_, index) => index != 1)
    for (const { events: sent } of stored) for (const event of sent) counts.set(event.event_id, (counts.get(event.event_id) || 0) + 1)
    expect(counts.size).toBe(200)
    expect([...counts.values()].filter((count) => count > 1)).toEqual([])
  })
})

// format 'spec', the default: the service stand-in (test/support/service-stand-in.ts) takes one
// SPEC envelope per request and refuses anything else with 400. A gate in front of it counts the
// requests and connections, holds requests when told, and passes each on as it came.

type StandIn = Awaited<ReturnType<typeof startServiceStandIn>>

async function gateTo(standIn: StandIn) {
  const seen: IncomingMessage['headers'][] = []
  let inFlight = 0
  let most = 0
  let connections = 0
  let holding = false
  let held: (() => void)[] = []
  let beforePassing: (count: number) => void = () => {}
  const started = await serve(async (request: IncomingMessage, response: ServerResponse) => {
    inFlight++
    most = Math.max(most, inFlight)
    seen.push(request.headers)
    const body = await bodyOf(request)
    if (holding) await new Promise<void>((resolve) => held.push(resolve))
    beforePassing(seen.length)
    const headers: Record<string, string> = {}
    for (const name of ['content-type', 'x-key']) if (typeof request.headers[name] == 'string') headers[name] = request.headers[name]
    const answer = await fetch(standIn.url, { method: 'POST', headers, body })
    const text = await answer.text()
    inFlight--
    response.writeHead(answer.status, { 'content-type': 'application/json' }).end(text)
  })
  started.server.on('connection', () => connections++)
  return {
    url: started.origin + '/v3/feedback',
    /** The headers of every request, in the order they came. */
    seen,
    inFlight: () => inFlight,
    most: () => most,
    connections: () => connections,
    hold: () => {
      holding = true
    },
    release: () => {
      holding = false
      held.splice(0).forEach((resolve) => resolve())
      held = []
    },
    /** Runs before the nth request is passed on. */
    beforePassing: (run: (count: number) => void) => {
      beforePassing = run
    },
    close: started.close
  }
}

const closing: (() => Promise<void>)[] = []
afterEach(async () => {
  await Promise.all(closing.splice(0).map((close) => close()))
})
async function standInWithGate(keys = ['KEY']) {
  const standIn = await startServiceStandIn({ keys, accept: 'header' })
  const gate = await gateTo(standIn)
  closing.push(gate.close, standIn.close)
  return { standIn, gate }
}

/** Relay events whose item ids are their markers: the stand-in sees no event id. */
const marked = (prefix: string, count: number, overrides: Record<string, unknown> = {}) =>
  Array.from({ length: count }, (_, index) =>
    relayEvent({ event_id: prefix + '-' + index, properties: { rid: 's-1', item_id: prefix + '-' + index, variant_item_id: 'v' }, ...overrides })
  )
const markersOf = (events: { properties: Record<string, unknown> }[]) => events.map((event) => event.properties.item_id as string).sort()

describe("forwardSink, format: 'spec' (the default), against the service stand-in", () => {
  it("posts each event alone as SPEC's envelope, JSON with the key in the body and in X-Key: the stand-in refuses none", async () => {
    const { standIn, gate } = await standInWithGate(['KEY', 'SERVICE-KEY'])
    const events = marked('shape', 3, { user: { uid: 'u', sid: 's', ip: '198.51.100.23', ua: 'Shopper/1.0', lang: ['en'] } })
    await forwardSink({ url: gate.url })(events)
    // A header of the shop's own goes along; Content-Type and X-Key stay the sink's.
    const headers = { authorization: 'Bearer s3cret', 'Content-Type': 'text/plain', 'X-Key': 'WRONG' }
    await forwardSink({ url: gate.url, key: 'SERVICE-KEY', headers })(marked('keyed', 1))
    expect(standIn.refused).toEqual([])
    expect(standIn.requests()).toBe(4)
    const stored = [...standIn.events].sort((a, b) => String(a.properties.item_id).localeCompare(String(b.properties.item_id)))
    expect(stored).toEqual([
      {
        event: 'click-item',
        properties: { rid: 's-1', item_id: 'keyed-0', variant_item_id: 'v' },
        key: 'SERVICE-KEY',
        t_client: 1767261604000,
        user: { uid: 'u', sid: 's', ip: '198.51.100.23' }
      },
      ...events.map((event) => ({ event: 'click-item', properties: event.properties, key: 'KEY', t_client: 1767261604000, user: event.user }))
    ])
    expect(gate.seen.map((seen) => seen['x-key'])).toEqual(['KEY', 'KEY', 'KEY', 'SERVICE-KEY'])
    expect(gate.seen[3]).toMatchObject({ authorization: 'Bearer s3cret', 'content-type': 'application/json' })
    // The caller's events are untouched.
    expect(events[0]).toMatchObject({ event_id: 'shape-0', received_at: 1767261605000, t_corrected: 1767261604000, t_client: 1767261600000 })
  })

  it('keeps 64 requests in flight, pipelined on 4 keep-alive connections: 101 events, one request each', async () => {
    const { standIn, gate } = await standInWithGate()
    const sink = forwardSink({ url: gate.url })
    // The first request probes alone (nothing is known of the service yet).
    await sink(marked('probe', 1))
    gate.hold()
    const events = marked('many', 100)
    const call = sink(events)
    await waitFor(() => gate.inFlight() == 64, '64 requests in flight')
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(gate.inFlight()).toBe(64)
    gate.release()
    await call
    expect(gate.most()).toBe(64)
    expect(standIn.requests()).toBe(101)
    expect(markersOf(standIn.events)).toEqual(markersOf([...marked('probe', 1), ...events]))
    // Each connection carries 16 requests at once, each sent without waiting for the answer to
    // the one before (HTTP/1.1 pipelining): the service is never opened a connection per event.
    expect(gate.connections()).toBeLessThanOrEqual(4)
  })

  it('an outage: the call and new calls are refused at once with the backoff, then a probe alone, then every event once', async () => {
    const { standIn, gate } = await standInWithGate()
    const sink = forwardSink({ url: gate.url })
    await sink(marked('before', 1))
    standIn.down(true)
    const failed = await outcome(sink(marked('outage', 40)))
    expect(failed).toBeInstanceOf(SinkUnavailable)
    expect((failed as SinkUnavailable).delivered).toEqual([])
    // The stand-in's 503 names no Retry-After: the first step, 1 s with jitter.
    const wait = (failed as SinkUnavailable).retryAfterMs
    expect(wait).toBeGreaterThan(400)
    expect(wait).toBeLessThanOrEqual(1000)
    // At most the 64 requests in flight when the first 503 came; the rest never left.
    const during = standIn.requests() - 1
    expect(during).toBeGreaterThanOrEqual(1)
    expect(during).toBeLessThanOrEqual(64)
    const meanwhile = await outcome(sink(marked('meanwhile', 5)))
    expect(meanwhile).toBeInstanceOf(SinkUnavailable)
    expect(standIn.requests()).toBe(1 + during)

    standIn.down(false)
    // The sink said when to come back.
    await new Promise((resolve) => setTimeout(resolve, wait + 20))
    gate.hold()
    const seenBefore = gate.seen.length
    const events = marked('after', 10)
    const call = sink(events)
    await waitFor(() => gate.seen.length == seenBefore + 1, 'the probe')
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(gate.inFlight()).toBe(1)
    gate.release()
    await call
    expect(markersOf(standIn.events)).toEqual(markersOf([...marked('before', 1), ...events]))
  })

  it('a service that goes down mid-call: the rejection names exactly the events the service stored', async () => {
    const { standIn, gate } = await standInWithGate()
    const sink = forwardSink({ url: gate.url, maxInFlight: 4 })
    await sink(marked('probe', 1))
    gate.beforePassing((count) => count == 12 && standIn.down(true))
    const failed = await outcome(sink(marked('mid', 30)))
    expect(failed).toBeInstanceOf(SinkUnavailable)
    const delivered = (failed as SinkUnavailable).delivered
    // Requests in flight when it went down may have been taken or not: which ones is chance.
    expect(delivered.length).toBeGreaterThan(0)
    expect(delivered.length).toBeLessThan(30)
    expect(markersOf(delivered)).toEqual(markersOf(standIn.events.filter((event) => String(event.properties.item_id).startsWith('mid-'))))
  })

  it('an event the service refuses (400) while it takes the others: SinkRefusal names it with the service’s message, the others are delivered, and the next call goes at once', async () => {
    const { standIn, gate } = await standInWithGate()
    const sink = forwardSink({ url: gate.url })
    const events = marked('refusal', 5)
    events[2] = relayEvent({ event_id: 'revoked', key: 'REVOKED', properties: { rid: 's-1', item_id: 'revoked', variant_item_id: 'v' } })
    const refused = await outcome(sink(events))
    expect(refused).toBeInstanceOf(SinkRefusal)
    const refusal = { event: events[2], error: 'the service refused click-item revoked with 400: The API key is not valid.' }
    expect((refused as SinkRefusal).refused).toEqual([refusal])
    expect(markersOf(standIn.events)).toEqual(markersOf(events.filter((event) => event != events[2])))
    // Alone too: the service took others a moment ago, so the fault is the event's.
    expect(await outcome(sink([events[2]]))).toEqual(new SinkRefusal([refusal]))
    // A refusal is an answer: no backoff.
    expect(await outcome(sink(marked('next', 1)))).toBe('ok')
  })

  it('a service that took nothing refuses every event (a wrong key): the call fails as the sink’s, and its events stay with their senders', async () => {
    const { standIn, gate } = await standInWithGate()
    const sink = forwardSink({ url: gate.url, key: 'WRONG' })
    const failed = await outcome(sink(marked('wrong', 3)))
    expect(failed).not.toBeInstanceOf(SinkRefusal)
    expect(failed).not.toBeInstanceOf(SinkUnavailable)
    expect((failed as Error).message).toBe('the service refused click-item wrong-0 with 400: The API key is not valid.')
    expect(standIn.events).toEqual([])
  })

  it('a service that does not answer in time: SinkUnavailable after the timeout, with a backoff to wait', async () => {
    fakeClock()
    const { standIn, gate } = await standInWithGate()
    gate.hold()
    const sink = forwardSink({ url: gate.url, timeout: 300 })
    let error: unknown
    outcome(sink(marked('hang', 1))).then((result) => (error = result))
    await until(() => gate.seen.length == 1, 'the request at the service')
    await vi.advanceTimersByTimeAsync(299)
    expect(error).toBeUndefined()
    await vi.advanceTimersByTimeAsync(1)
    await until(() => error !== undefined, 'the call to settle')
    expect(error).toBeInstanceOf(SinkUnavailable)
    expect((error as SinkUnavailable).retryAfterMs).toBeGreaterThan(400)
    expect((error as SinkUnavailable).retryAfterMs).toBeLessThanOrEqual(1000)
    expect(standIn.events).toEqual([])
  })

  it('events that wait a whole timeout for a free request are given up; those that went are delivered and named; no call outlasts two timeouts', async () => {
    fakeClock()
    const { standIn, gate } = await standInWithGate()
    const sink = forwardSink({ url: gate.url, timeout: 2400, maxInFlight: 2 })
    await sink(marked('probe', 1))
    gate.hold()
    const events = marked('slow', 6)
    let error: unknown
    outcome(sink(events)).then((result) => (error = result))
    // The service answers every 1,600 ms, within the 2,400 ms timeout: two events go at once, two
    // more at 1,600 ms, and the last two would get a request at 3,200 ms, past the timeout.
    await until(() => gate.seen.length == 3, 'the first two requests')
    await vi.advanceTimersByTimeAsync(1600)
    gate.release()
    gate.hold()
    await until(() => gate.seen.length == 5, 'the next two requests')
    await vi.advanceTimersByTimeAsync(800)
    // The last two are given up; the call settles once the two in flight are answered.
    expect(error).toBeUndefined()
    await vi.advanceTimersByTimeAsync(800)
    gate.release()
    await until(() => error !== undefined, 'the call to settle')
    expect(error).toBeInstanceOf(SinkUnavailable)
    expect((error as Error).message).toBe('no request was free for 2400 ms')
    expect((error as SinkUnavailable).delivered).toEqual(events.slice(0, 4))
    expect(markersOf(standIn.events)).toEqual(markersOf([...marked('probe', 1), ...events.slice(0, 4)]))
    // The last two never reached the service.
    expect(gate.seen).toHaveLength(5)
  })

  it('refuses a url that is none, naming the option', () => {
    expect(() => forwardSink({ url: '/v3/feedback' })).toThrow(
      'discovery-feedback: relay: forwardSink\'s url must be the service\'s http or https URL, not "/v3/feedback"'
    )
  })

  it('refuses a format it does not know, naming the option', () => {
    expect(() => forwardSink({ url: 'http://127.0.0.1:9/', format: 'array' as 'spec' })).toThrow(
      "discovery-feedback: relay: forwardSink's format must be 'spec' or 'batch', not \"array\""
    )
  })
})

describe("a relay in front of the stand-in, format: 'spec'", () => {
  // A shopper's request, with the peer address a server gives the relay.
  const post = (relay: Relay, events: unknown[]) =>
    relay.fetch(new Request('http://shop.test/df/events', { method: 'POST', body: JSON.stringify(events) }), { remoteAddress: '203.0.113.9' })

  it('a batch the service stopped taking half-way: 503, and the resend brings each event to the service once', async () => {
    const { createRelay } = await import('../../src/relay')
    const { standIn, gate } = await standInWithGate()
    const relay = createRelay({ keys: ['KEY'], sink: forwardSink({ url: gate.url, maxInFlight: 4 }) })
    const events = Array.from({ length: 30 }, (_, index) => envelope({ properties: { rid: 's-1', item_id: 'half-' + index, variant_item_id: 'v' } }))
    gate.beforePassing((count) => count == 12 && standIn.down(true))
    const first = await post(relay, events)
    expect(first.status).toBe(503)
    const storedFirst = standIn.events.length
    expect(storedFirst).toBeGreaterThan(0)
    expect(storedFirst).toBeLessThan(30)
    standIn.down(false)
    gate.beforePassing(() => {})
    await new Promise((resolve) => setTimeout(resolve, Number(first.headers.get('retry-after')) * 1000))
    const second = await post(relay, events)
    expect(second.status).toBe(200)
    expect(await second.json()).toMatchObject({ accepted: 30 - storedFirst, duplicates: storedFirst })
    expect(markersOf(standIn.events)).toEqual(markersOf(events))
  })

  it('an event the service refuses while it takes the others, over HTTP: the others stored once and answered taken, the refused one answered rejected by name and dead-lettered', async () => {
    const { createRelay, toNodeHandler } = await import('../../src/relay')
    const { standIn, gate } = await standInWithGate(['KEY'])
    const letters: DeadLetter[] = []
    const errors: Error[] = []
    const relay = createRelay({
      keys: ['KEY', 'REVOKED'],
      sink: forwardSink({ url: gate.url }),
      deadLetter: (more) => void letters.push(...more),
      onError: (error) => errors.push(error)
    })
    const served = await serve(toNodeHandler(relay))
    closing.push(served.close)
    const events = [
      envelope({ properties: { rid: 's-1', item_id: 'kept-1', variant_item_id: 'v' } }),
      envelope({ key: 'REVOKED', properties: { rid: 's-1', item_id: 'revoked', variant_item_id: 'v' } }),
      envelope({ properties: { rid: 's-1', item_id: 'kept-2', variant_item_id: 'v' } })
    ]
    const error = 'the service refused click-item ' + events[1].event_id + ' with 400: The API key is not valid.'
    // A shopper's browser: Node's own agent is a bot's, whose events the relay drops.
    const headers = { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0' }
    const send = () => fetch(served.origin + '/df/events', { method: 'POST', headers, body: JSON.stringify(events) }).then(read)
    const first = await send()
    expect(first.status).toBe(200)
    expect(first.body).toEqual({ accepted: 2, duplicates: 0, rejected: [{ index: 1, error }] })
    expect(markersOf(standIn.events)).toEqual(['kept-1', 'kept-2'])
    await waitFor(() => letters.length == 1, 'the dead letter')
    expect(letters[0]).toMatchObject({ error, key: 'REVOKED', envelope: events[1] })
    // A resend, as after a lost answer: the others are not stored twice, and the refused one is refused again.
    const again = await send()
    expect(again.body).toEqual({ accepted: 0, duplicates: 2, rejected: [{ index: 1, error }] })
    expect(markersOf(standIn.events)).toEqual(['kept-1', 'kept-2'])
    expect(standIn.refused).toHaveLength(2)
    expect(errors.filter((error) => error.name != 'DropNotice')).toEqual([])
  })
})
