// @vitest-environment node
import type { IncomingMessage, ServerResponse } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import { forwardSink, SinkUnavailable, type RelayEvent } from '../../src/relay'
import { waitFor } from '../support/wait'
import { bodyOf, envelope, serve } from './support'

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

/** Settles a promise into what the caller saw, so several can be awaited together. */
const outcome = (promise: Promise<void>) =>
  promise.then(
    () => 'ok' as const,
    (error: Error) => error
  )

describe('forwardSink', () => {
  it("forwards SPEC's envelopes: t_client corrected, the relay's times taken out, the key replaced when given", async () => {
    const target = await start()
    const sink = forwardSink({ url: target.url, key: 'SERVICE-KEY', headers: { authorization: 'Bearer s3cret' } })
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
    await forwardSink({ url: target.url })([relayEvent({ key: 'SHOP-A' }), relayEvent({ key: 'SHOP-B' })])
    expect(target.received[0].events.map((event) => event.key)).toEqual(['SHOP-A', 'SHOP-B'])
  })

  it('batches calls that arrive while a request is in flight into one request, each call resolved once its events are answered', async () => {
    const target = await start()
    const sink = forwardSink({ url: target.url, maxInFlight: 1 })
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
    const sink = forwardSink({ url: target.url, maxInFlight: 3 })
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
    const sink = forwardSink({ url: target.url, maxInFlight: 1 })
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
    const sink = forwardSink({ url: target.url, maxInFlight: 4 })
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
    const target = await start()
    target.answer(() => 'hang')
    const sink = forwardSink({ url: target.url, timeout: 300 })
    const started = Date.now()
    const error = await outcome(sink([relayEvent()]))
    const took = Date.now() - started
    expect(error).toBeInstanceOf(SinkUnavailable)
    expect(took).toBeGreaterThanOrEqual(290)
    expect(took).toBeLessThan(2000)
    // The first step of the backoff: 1 s with jitter, half to all of it.
    expect((error as SinkUnavailable).retryAfterMs).toBeGreaterThan(400)
    expect((error as SinkUnavailable).retryAfterMs).toBeLessThanOrEqual(1000)
  })

  it('a call that waits a whole timeout for a free request is given up, so no call outlasts two timeouts (the relay’s claims outlast that)', async () => {
    const target = await start()
    // A slow service that still answers within the timeout, and events of 40 KB: one a request.
    target.answer(() => ({ status: 200 }))
    const slow = target.url
    const sink = forwardSink({ url: slow, timeout: 2400, maxInFlight: 1 })
    target.hold()
    const large = () => relayEvent({ properties: { item_id: 'x'.repeat(40000), variant_item_id: 'v' } })
    const first = outcome(sink([large()]))
    const second = outcome(sink([large()]))
    const third = outcome(sink([large()]))
    // The service answers each request after 1,600 ms, well within the 2,400 ms timeout: the third
    // call would wait 3,200 ms for a free request, 800 ms past the timeout.
    const answering = setInterval(() => {
      target.release()
      target.hold()
    }, 1600)
    try {
      const started = Date.now()
      const error = await third
      expect(error).toBeInstanceOf(SinkUnavailable)
      expect((error as Error).message).toBe('no request was free for 2400 ms')
      // Given up at the timeout, before the second's answer would have freed a request (3,200 ms).
      expect(Date.now() - started).toBeLessThan(3000)
      expect(await first).toBe('ok')
      expect(await second).toBe('ok')
      // The third never reached the service.
      expect(target.received).toHaveLength(2)
    } finally {
      clearInterval(answering)
    }
  })

  it('a service refusing the batch (4xx) rejects with a plain error, and the next call goes through at once', async () => {
    const target = await start()
    const sink = forwardSink({ url: target.url })
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
    const sink = forwardSink({ url: target.url, maxInFlight: 1 })
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

describe('a relay batch that spans several forwarded requests', () => {
  it('marks what got through before a 503, so the resend does not double it at the service', async () => {
    const { createRelay } = await import('../../src/relay')
    const target = await start()
    let requests = 0
    target.answer(() => (++requests == 2 ? { status: 503, headers: { 'retry-after': '1' } } : { status: 200 }))
    const relay = createRelay({ keys: ['KEY'], sink: forwardSink({ url: target.url, maxInFlight: 1 }), maxBodyBytes: 1 << 20 })
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
