// @vitest-environment node
import { connect } from 'node:net'
import { describe, expect, it } from 'vitest'
import { orderEventId } from '../../src/shared/order-event-id'
import { validate } from '../../src/shared/rules'
import { createRelay, memoryStore, SinkUnavailable, toNodeHandler, type BatchReport, type DeliveryStore, type RelayOptions } from '../../src/relay'
import { envelope, gate, read, recordingSink, serve } from './support'

// The collector protocol (README "Collector protocol") as the relay speaks it, called the way
// every platform calls it: a Request in, a Response out.

const URL_ = 'http://shop.test/df/events'

type Post = { query?: string; headers?: Record<string, string>; remoteAddress?: string; url?: string; method?: string }

function setup(options: Partial<RelayOptions> = {}) {
  const recorded = recordingSink()
  const relay = createRelay({ keys: ['KEY'], sink: recorded.sink, ...options })
  const send = async (body: unknown, { query = '', headers = {}, remoteAddress = '203.0.113.9', url = URL_, method = 'POST' }: Post = {}) =>
    read(
      await relay.fetch(
        new Request(url + query, {
          method,
          headers,
          body: method == 'GET' || method == 'HEAD' ? undefined : typeof body == 'string' ? body : JSON.stringify(body)
        }),
        { remoteAddress }
      )
    )
  return { relay, send, ...recorded }
}

/** A request body that arrives in chunks, with no Content-Length, `chunks` of `size` bytes (endless when Infinity). */
function streamed(chunks: number, size = 16384) {
  let sent = 0
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= chunks) return controller.close()
      sent++
      controller.enqueue(new TextEncoder().encode(' '.repeat(size)))
    }
  })
  return { stream, sent: () => sent }
}

describe('answers', () => {
  it('stores valid envelopes, answers 200 with accepted, duplicates and rejected, and the same batch again as duplicates', async () => {
    const { send, events } = setup()
    const batch = [envelope(), envelope(), envelope({ properties: { item_id: 42 } })]
    const first = await send(batch)
    expect(first.status).toBe(200)
    expect(first.headers.get('content-type')).toBe('application/json')
    expect(first.body).toEqual({ accepted: 2, duplicates: 0, rejected: [{ index: 2, error: expect.stringContaining('item_id') }] })
    expect(events().map((event) => event.event_id)).toEqual([batch[0].event_id, batch[1].event_id])
    const again = await send(batch)
    expect(again.status).toBe(200)
    expect(again.body).toEqual({ accepted: 0, duplicates: 2, rejected: [{ index: 2, error: expect.any(String) }] })
    expect(events()).toHaveLength(2)
  })

  it('takes a single envelope as a batch of one, whatever the Content-Type', async () => {
    const { send, events } = setup()
    const answer = await send(envelope(), { headers: { 'content-type': 'text/plain;charset=UTF-8' } })
    expect(answer).toMatchObject({ status: 200, body: { accepted: 1 } })
    expect(events()).toHaveLength(1)
  })

  it('400 when every envelope is invalid, with the first error; 400 for a body that is not JSON', async () => {
    const { send, events } = setup()
    const invalid = await send([envelope({ t_client: 'soon' }), envelope({ user: { uid: 'x'.repeat(33), sid: 's' } })])
    expect(invalid.status).toBe(400)
    expect(invalid.body.error.message).toMatch(/t_client/)
    expect(invalid.body.rejected.map((rejected: { index: number }) => rejected.index)).toEqual([0, 1])
    const junk = await send('[{"event":')
    expect(junk.status).toBe(400)
    expect(junk.body.error.message).toMatch(/^body is not JSON: /)
    expect(events()).toEqual([])
  })

  it('401 when no envelope has a key, 403 when none has a known one, 200 when one does', async () => {
    const { send, events } = setup()
    const { key: _, ...keyless } = envelope()
    expect(await send([keyless, { ...keyless, key: '' }])).toMatchObject({ status: 401, body: { error: { message: 'An API key must be provided.' } } })
    expect(await send([envelope({ key: 'OTHER' })])).toMatchObject({ status: 403, body: { error: { message: 'The API key is not valid.' } } })
    expect(await send([keyless, envelope({ key: 'OTHER' })])).toMatchObject({ status: 403 })
    // A bad key and an invalid envelope: not a key problem alone.
    expect((await send([envelope({ key: 'OTHER' }), envelope({ event: 'nope' })])).status).toBe(400)
    expect(events()).toEqual([])
    expect(await send([envelope({ key: 'OTHER' }), envelope()])).toMatchObject({ status: 200, body: { accepted: 1, rejected: [{ index: 0 }] } })
  })

  it('405 with Allow for another method; a GET without an event in its query 400; OPTIONS is a preflight answered 204', async () => {
    const { send } = setup({ origins: ['https://www.shop.example'] })
    for (const method of ['PUT', 'DELETE', 'PATCH']) {
      const answer = await send('[]', { method })
      expect(answer.status).toBe(405)
      expect(answer.headers.get('allow')).toBe('GET, POST, OPTIONS')
    }
    expect(await send(undefined, { method: 'GET' })).toMatchObject({
      status: 400,
      body: { error: { message: 'a GET request carries its event in the query' } }
    })
    const preflight = await send(undefined, {
      method: 'OPTIONS',
      headers: { origin: 'https://www.shop.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-custom' }
    })
    expect(preflight.status).toBe(204)
    expect(preflight.body).toBe('')
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://www.shop.example')
    expect(preflight.headers.get('access-control-allow-methods')).toBe('POST, OPTIONS')
    expect(preflight.headers.get('access-control-allow-headers')).toBe('content-type,x-custom')
  })
})

describe('limits', () => {
  it('413 for a body over maxBodyBytes, by its Content-Length, without reading it', async () => {
    // Over real HTTP, as a shop's server hands the relay a request: headers that declare one byte
    // over the limit, and a body that never comes. Only the declared length can answer this.
    const { relay, events } = setup({ maxBodyBytes: 1000 })
    const server = await serve(toNodeHandler(relay))
    try {
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(server.port, '127.0.0.1', () =>
          socket.write('POST /df/events HTTP/1.1\r\nHost: shop.test\r\nContent-Type: text/plain\r\nContent-Length: 1001\r\n\r\n')
        )
        let text = ''
        socket.on('data', (chunk) => {
          text += chunk
          if (text.includes('\r\n\r\n{')) resolve(text)
        })
        socket.on('error', reject)
      })
      expect(answer).toMatch(/^HTTP\/1\.1 413 /)
      expect(answer).toContain('body is larger than 1000 bytes')
    } finally {
      await server.close()
    }
    expect(events()).toEqual([])
  })

  it('413 for a body over maxBodyBytes that declares no length; exactly the limit is taken', async () => {
    const { send, events } = setup({ maxBodyBytes: 1000 })
    const answer = await send('[' + ' '.repeat(1000) + ']')
    expect(answer.status).toBe(413)
    expect(answer.body.error.message).toBe('body is larger than 1000 bytes')
    expect(events()).toEqual([])
    // Exactly the limit is taken.
    expect((await send(JSON.stringify([envelope()]).padEnd(1000, ' '))).status).toBe(200)
  })

  it('413 for a streamed body without Content-Length as soon as it passes the limit: an endless upload is not read to its end', async () => {
    const { relay, events } = setup()
    const endless = streamed(Infinity)
    const request = new Request(URL_, { method: 'POST', body: endless.stream, duplex: 'half' } as RequestInit)
    expect(request.headers.get('content-length')).toBeNull()
    const answer = await read(await relay.fetch(request, { remoteAddress: '203.0.113.9' }))
    expect(answer.status).toBe(413)
    expect(answer.body.error.message).toBe('body is larger than 262144 bytes')
    // 256 KiB in 16 KiB chunks: the 17th passes the limit (a chunk or two more may be pulled ahead).
    expect(endless.sent()).toBeLessThan(20)
    expect(events()).toEqual([])
  })

  it('a streamed body within the limit is read whole', async () => {
    const { relay, events } = setup({ maxBodyBytes: 4096 })
    const batch = JSON.stringify([envelope(), envelope()])
    const bytes = new TextEncoder().encode(batch)
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let offset = 0; offset < bytes.length; offset += 7) controller.enqueue(bytes.slice(offset, offset + 7))
        controller.close()
      }
    })
    const answer = await read(await relay.fetch(new Request(URL_, { method: 'POST', body: stream, duplex: 'half' } as RequestInit)))
    expect(answer).toMatchObject({ status: 200, body: { accepted: 2 } })
    expect(events()).toHaveLength(2)
  })

  it('413 for more than 500 envelopes in one body, so that one request claims at most 500 new ids; 500 are taken', async () => {
    const { send, events } = setup({ maxBodyBytes: 1 << 20 })
    const small = (index: number) => envelope({ event_id: 'e' + index, user: { uid: 'u', sid: 's' }, properties: { item_id: 'i', variant_item_id: 'v' } })
    const over = await send(Array.from({ length: 501 }, (_, index) => small(index)))
    expect(over).toMatchObject({ status: 413, body: { error: { message: 'more than 500 envelopes in one request' } } })
    expect(events()).toEqual([])
    expect(await send(Array.from({ length: 500 }, (_, index) => small(index)))).toMatchObject({ status: 200, body: { accepted: 500 } })
  })
})

describe('CORS', () => {
  const origin = (value: string) => ({ headers: { origin: value } })

  it('answers only the listed origins, exposing Retry-After and varying by Origin', async () => {
    const { send, events } = setup({ origins: ['https://www.shop.example', 'https://m.shop.example'] })
    const listed = await send([envelope()], origin('https://m.shop.example'))
    expect(listed.headers.get('access-control-allow-origin')).toBe('https://m.shop.example')
    expect(listed.headers.get('access-control-expose-headers')).toBe('Retry-After')
    expect(listed.headers.get('vary')).toBe('Origin')
    const other = await send([envelope()], origin('https://evil.example'))
    expect(other.headers.get('access-control-allow-origin')).toBeNull()
    // No CORS header is no refusal of the data: the page cannot read the answer, that is all.
    expect(events()).toHaveLength(2)
  })

  it('sends no CORS header by default (same origin only), and none without an Origin', async () => {
    const { send } = setup()
    expect((await send([envelope()], origin('https://www.shop.example'))).headers.get('access-control-allow-origin')).toBeNull()
    expect((await send([envelope()])).headers.get('access-control-allow-origin')).toBeNull()
  })

  it("'*' answers every origin with '*', a Shopify pixel's 'null' included; 'null' can be listed alone", async () => {
    const any = setup({ origins: '*' })
    for (const value of ['https://a.example', 'null']) {
      const answer = await any.send([envelope()], origin(value))
      expect(answer.headers.get('access-control-allow-origin')).toBe('*')
      expect(answer.headers.get('access-control-expose-headers')).toBe('Retry-After')
    }
    const pixel = setup({ origins: ['null'] })
    expect((await pixel.send([envelope()], origin('null'))).headers.get('access-control-allow-origin')).toBe('null')
    expect((await pixel.send([envelope()], origin('https://a.example'))).headers.get('access-control-allow-origin')).toBeNull()
  })

  it('CORS headers are on the failures too, so the page reads a 503 and its Retry-After', async () => {
    const { send, failWith } = setup({ origins: ['https://www.shop.example'] })
    failWith(() => new SinkUnavailable('down', 7000))
    const answer = await send([envelope()], origin('https://www.shop.example'))
    expect(answer.status).toBe(503)
    expect(answer.headers.get('retry-after')).toBe('7')
    expect(answer.headers.get('access-control-allow-origin')).toBe('https://www.shop.example')
    const bad = await send('nope', origin('https://www.shop.example'))
    expect(bad.status).toBe(400)
    expect(bad.headers.get('access-control-allow-origin')).toBe('https://www.shop.example')
  })
})

describe('times', () => {
  it('moves t_client by the gap between t_sent and the relay clock, records received_at, keeps t_client as sent', async () => {
    const { send, events } = setup()
    // The device clock is an hour slow: it sent "now" as an hour ago.
    const sentAt = Date.now() - 3600000
    const before = Date.now()
    await send([envelope({ t_client: sentAt - 5000 })], { query: '?t_sent=' + sentAt })
    const [event] = events()
    expect(event.t_client).toBe(sentAt - 5000)
    expect(event.received_at).toBeGreaterThanOrEqual(before)
    expect(event.received_at).toBeLessThanOrEqual(Date.now())
    expect(event.t_corrected - (event.received_at - 5000)).toBe(0)
  })

  it('a t_sent more than a day off, or no time at all, corrects nothing', async () => {
    const { send, events } = setup()
    for (const query of ['?t_sent=' + (Date.now() - 2 * 864e5), '?t_sent=' + (Date.now() + 864e5 + 60000), '?t_sent=soon', '?t_sent=-5', '']) {
      await send([envelope({ t_client: 1000 })], { query })
    }
    expect(events().map((event) => event.t_corrected)).toEqual([1000, 1000, 1000, 1000, 1000])
  })
})

describe('unconfirmed', () => {
  it('answers ?unconfirmed= with the listed ids it has not stored, from the store, with an empty body and the shopper’s uid cookie', async () => {
    const { send } = setup()
    const stored = envelope()
    await send([stored])
    const answer = await send([], { query: `?t_sent=${Date.now()}&unconfirmed=${stored.event_id},never-came`, headers: { cookie: 'df_uid=uid-1' } })
    expect(answer).toMatchObject({ status: 200, body: { accepted: 0, duplicates: 0, rejected: [], missing: ['never-came'] } })
  })

  it('tells nobody else whether an event arrived: another uid, or none, is told every id is missing', async () => {
    const { send } = setup()
    const purchase = envelope({
      event: 'purchase',
      event_id: orderEventId('KEY', '1002'),
      properties: { order_id: '1002', currency: 'EUR', revenue: 5, line_items: [] }
    })
    await send([purchase], { headers: { cookie: 'df_uid=uid-1' } })
    // A competitor computes the order's id and asks, with a cookie of its own, with an event of its own, or with neither.
    const asked = `?unconfirmed=${purchase.event_id}`
    expect((await send([], { query: asked, headers: { cookie: 'df_uid=competitor' } })).body.missing).toEqual([purchase.event_id])
    expect((await send([envelope({ user: { uid: 'competitor', sid: 's' } })], { query: asked })).body.missing).toEqual([purchase.event_id])
    expect((await send([], { query: asked })).body.missing).toEqual([purchase.event_id])
    // The shopper whose purchase it was is told it arrived.
    expect((await send([], { query: asked, headers: { cookie: 'df_uid=uid-1' } })).body.missing).toEqual([])
  })

  it('an id in the same request counts as stored; without the question there is no missing', async () => {
    const { send } = setup()
    const now = envelope()
    const answer = await send([now], { query: `?unconfirmed=${now.event_id},other` })
    expect(answer.body.missing).toEqual(['other'])
    expect((await send([envelope()])).body).not.toHaveProperty('missing')
  })

  it('reads another instance’s deliveries through a shared store', async () => {
    const store = memoryStore()
    const first = setup({ store })
    const second = setup({ store })
    const event = envelope()
    await first.send([event])
    expect((await second.send([], { query: '?unconfirmed=' + event.event_id, headers: { cookie: 'df_uid=uid-1' } })).body.missing).toEqual([])
    expect((await second.send([event])).body).toMatchObject({ accepted: 0, duplicates: 1 })
    expect(second.events()).toEqual([])
  })
})

describe('bounds', () => {
  it('counts a question as store reads: an empty body with 100 ids asked costs 3 of the bucket, and the next request is told to wait', async () => {
    const { send } = setup({ rateLimit: { burst: 4, perSecond: 0.01 } })
    const ids = Array.from({ length: 100 }, (_, index) => 'id-' + index).join()
    expect((await send([], { query: '?unconfirmed=' + ids, headers: { cookie: 'df_uid=u' } })).status).toBe(200)
    expect((await send([])).status).toBe(200)
    const refused = await send([])
    expect(refused.status).toBe(429)
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
  })

  it('takes a page purchase through a store written before owners, whose lookup answers booleans', async () => {
    const inner = memoryStore()
    const store: DeliveryStore = { ...inner, lookup: async (ids) => (await inner.lookup(ids)).map((owner) => owner != null) as never }
    const { send, events } = setup({ store })
    const purchase = envelope({
      event: 'purchase',
      event_id: orderEventId('KEY', '7'),
      properties: { order_id: '7', currency: 'EUR', revenue: 5, line_items: [] }
    })
    expect((await send([purchase])).body).toMatchObject({ accepted: 1 })
    expect(events()).toHaveLength(1)
  })
})

describe('the user', () => {
  it('takes a uid and a sid of exactly 1 and exactly 32 characters, and refuses 33 (SPEC "Limits")', async () => {
    const { send, events } = setup()
    for (const length of [1, 32]) {
      const id = 'a'.repeat(length)
      expect(await send([envelope({ user: { uid: id, sid: id } })])).toMatchObject({ status: 200, body: { accepted: 1 } })
    }
    const long = 'a'.repeat(33)
    expect(await send([envelope({ user: { uid: long, sid: 's' } })])).toMatchObject({
      status: 400,
      body: { error: { message: 'click-item: user.uid must be a string of 1 to 32 characters' } }
    })
    expect(await send([envelope({ user: { uid: 'u', sid: long } })])).toMatchObject({
      status: 400,
      body: { error: { message: 'click-item: user.sid must be a string of 1 to 32 characters' } }
    })
    expect(events().map((event) => event.user.uid.length)).toEqual([1, 32])
  })

  it.each([
    [undefined, 'user is required'],
    [['u', 's'], 'user must be an object'],
    [{ sid: 's' }, 'user.uid is required'],
    [{ uid: 'u', sid: 's', ip: 7 }, 'user.ip must be a string'],
    [{ uid: 'u', sid: 's', lang: 'de' }, 'user.lang must be an array of language codes']
  ])('refuses the user %j by the rules the tracker checks it with, naming the field and the rule', async (user, rule) => {
    const { send, events } = setup()
    expect(await send([envelope({ user })])).toMatchObject({ status: 400, body: { error: { message: 'click-item: ' + rule } } })
    expect(events()).toEqual([])
  })

  it('keeps only the user fields SPEC defines', async () => {
    const { send, events } = setup()
    await send([envelope({ user: { uid: 'u', sid: 's', email: 'a@shop.example', lang: ['de'], name: 'Ada' } })])
    expect(events()[0].user).toEqual({ uid: 'u', sid: 's', email: 'a@shop.example', lang: ['de'], ip: '203.0.113.9' })
  })
})

describe('user.ip and user.ua', () => {
  const SECRET = 'a-server-secret-of-32-characters'

  it('fills them from the request when missing, and keeps what the envelope gave when a server sender sent it', async () => {
    const { send, events } = setup({ serverSecrets: ['an-older-secret-still-honoured', SECRET], bots: 'keep' })
    const given = envelope({ user: { uid: 'u', sid: 's', ip: '198.51.100.7', ua: 'Server/1.0' } })
    await send([envelope(), given], { remoteAddress: '203.0.113.9', headers: { 'user-agent': 'Mozilla/5.0 Shopper', authorization: 'Bearer ' + SECRET } })
    expect(events().map((event) => [event.user.ip, event.user.ua])).toEqual([
      ['203.0.113.9', 'Mozilla/5.0 Shopper'],
      ['198.51.100.7', 'Server/1.0']
    ])
  })

  it('takes them from the connection, never from the body, for any other sender: a page, a secret not sent as a bearer token', async () => {
    const { send, events } = setup({ serverSecrets: [SECRET], trustProxy: 1, bots: 'keep' })
    const forged = () => envelope({ user: { uid: 'u', sid: 's', ip: '8.8.8.8', ua: 'Forged/1.0' } })
    for (const authorization of [undefined, SECRET, 'Basic ' + SECRET]) {
      const headers: Record<string, string> = { 'user-agent': 'Mozilla/5.0 Shopper', 'x-forwarded-for': '203.0.113.5' }
      if (authorization) headers.authorization = authorization
      await send([forged()], { remoteAddress: '10.0.0.2', headers })
    }
    expect(events().map((event) => [event.user.ip, event.user.ua])).toEqual(Array(3).fill(['203.0.113.5', 'Mozilla/5.0 Shopper']))
    // A page's envelope with an ip, sent where the request has none to give: none is kept.
    const bare = setup({ serverSecrets: [SECRET] })
    await bare.relay.fetch(new Request(URL_, { method: 'POST', body: JSON.stringify([forged()]) }))
    expect(bare.events()[0].user).toEqual({ uid: 'u', sid: 's' })
  })

  it('answers a wrong bearer token, or the server sender without one, 401 naming serverSecrets, and stores nothing of it', async () => {
    const { send, events } = setup({ serverSecrets: [SECRET], trustProxy: 1, bots: 'keep' })
    const given = () => envelope({ user: { uid: 'u', sid: 's', ip: '8.8.8.8', ua: 'Forged/1.0' } })
    const senders: Record<string, string>[] = [
      { authorization: 'Bearer not-the-secret-at-all-000' },
      { authorization: 'Bearer ' + SECRET.slice(0, -1) },
      { 'user-agent': 'discovery-feedback-server/1' }
    ]
    for (const headers of senders) {
      const answer = await send([given()], { remoteAddress: '10.0.0.2', headers: { 'user-agent': 'Mozilla/5.0 Shopper', ...headers } })
      expect(answer.status).toBe(401)
      expect(answer.body.error.message).toMatch(/serverSecrets/)
    }
    expect(events()).toEqual([])
  })

  it('refuses a secret shorter than 16 characters at start', () => {
    expect(() => createRelay({ keys: ['KEY'], sink: async () => {}, serverSecrets: ['short'] })).toThrow(
      /serverSecrets must list secrets of at least 16 characters/
    )
  })

  it('leaves them out when the request has none to give', async () => {
    const { relay, events } = setup()
    // A Web handler with no peer address and no User-Agent header.
    await relay.fetch(new Request(URL_, { method: 'POST', body: JSON.stringify([envelope()]) }))
    expect(events()[0].user).toEqual({ uid: 'uid-1', sid: 'sid-1', lang: ['en'] })
  })
})

describe('the uid cookie', () => {
  const cookieOf = (answer: { headers: Headers }) => answer.headers.getSetCookie()

  it('renews the request’s df_uid with the storefront’s attributes: Path=/, 400 days, SameSite=Lax', async () => {
    const { send } = setup()
    const answer = await send([envelope({ user: { uid: 'from-event', sid: 's' } })], { headers: { cookie: 'a=1; df_uid=from-cookie; df_sid=x' } })
    expect(cookieOf(answer)).toEqual(['df_uid=from-cookie; Path=/; Max-Age=34560000; SameSite=Lax'])
  })

  it('renews only a uid cookie the request carried: none from the events (memory storage, a logout), none for a cookie not ours; Secure on https, Domain when given', async () => {
    const plain = setup()
    // A tracker that keeps its ids in memory, or just deleted them, sends no cookie: none comes back.
    expect(cookieOf(await plain.send([envelope({ user: { uid: 'u-event', sid: 's' } })]))).toEqual([])
    expect(cookieOf(await plain.send([envelope({ user: { uid: 'u-event', sid: 's' } })], { headers: { cookie: 'df_uid=<script>' } }))).toEqual([])
    const https = await plain.send([envelope({ user: { uid: 'u', sid: 's' } })], { url: 'https://shop.test/df/events', headers: { cookie: 'df_uid=u' } })
    expect(cookieOf(https)).toEqual(['df_uid=u; Path=/; Max-Age=34560000; SameSite=Lax; Secure'])
    const domain = setup({ cookie: { domain: 'shop.example' } })
    expect(cookieOf(await domain.send([], { headers: { cookie: 'df_uid=abc' } }))).toEqual([
      'df_uid=abc; Path=/; Max-Age=34560000; SameSite=Lax; Domain=shop.example'
    ])
  })

  it('Secure behind a proxy that ended TLS (X-Forwarded-Proto: https), as the storefront writes it on https', async () => {
    const { send } = setup({ trustProxy: 1 })
    const answer = await send([envelope()], { headers: { 'x-forwarded-proto': 'https', cookie: 'df_uid=abc' }, remoteAddress: '10.0.0.2' })
    expect(cookieOf(answer)).toEqual(['df_uid=abc; Path=/; Max-Age=34560000; SameSite=Lax; Secure'])
  })

  it('sets none with cookie: false, and none when there is no uid to renew', async () => {
    const off = setup({ cookie: false })
    expect(cookieOf(await off.send([envelope()], { headers: { cookie: 'df_uid=abc' } }))).toEqual([])
    const on = setup()
    expect(cookieOf(await on.send([]))).toEqual([])
    expect(cookieOf(await on.send([envelope({ key: 'OTHER' })]))).toEqual([])
  })
})

describe('exactly once', () => {
  it('an event id twice in one batch is stored once and counted a duplicate', async () => {
    const { send, events } = setup()
    const purchase = envelope()
    const answer = await send([purchase, envelope(), { ...purchase, t_client: purchase.t_client + 5 }])
    expect(answer.body).toMatchObject({ accepted: 2, duplicates: 1 })
    expect(events().map((event) => event.event_id)).toEqual([purchase.event_id, expect.any(String)])
    expect(events()[0].t_client).toBe(purchase.t_client)
  })

  it('a failing sink: 503 with Retry-After, the claims released, and the retry reaches the sink exactly once', async () => {
    const errors: Error[] = []
    const { send, failWith, counts } = setup({ onError: (error) => errors.push(error) })
    const batch = [envelope(), envelope(), envelope()]
    failWith(() => new Error('disk full'))
    const failed = await send(batch)
    expect(failed.status).toBe(503)
    expect(failed.headers.get('retry-after')).toBe('2')
    expect(errors.map((error) => error.message)).toEqual(['disk full'])
    failWith(() => new SinkUnavailable('backed off', 4200))
    expect((await send(batch)).headers.get('retry-after')).toBe('5')
    failWith(undefined)
    const retried = await send(batch)
    expect(retried).toMatchObject({ status: 200, body: { accepted: 3, duplicates: 0 } })
    expect(await send(batch)).toMatchObject({ status: 200, body: { accepted: 0, duplicates: 3 } })
    expect([...counts().values()]).toEqual([1, 1, 1])
  })

  it('a failing store: 503 with Retry-After, nothing handed to the sink', async () => {
    const store = memoryStore()
    const broken: DeliveryStore = { ...store, claim: () => Promise.reject(new Error('ECONNREFUSED')) }
    const errors: Error[] = []
    const { send, events } = setup({ store: broken, onError: (error) => errors.push(error) })
    const answer = await send([envelope()])
    expect(answer.status).toBe(503)
    expect(answer.headers.get('retry-after')).toBe('2')
    expect(events()).toEqual([])
    expect(errors.map((error) => error.message)).toEqual(['ECONNREFUSED'])
  })

  it('a store that fails to mark delivered ids still answers 200 (the sink has them) and says so to onError', async () => {
    const store = memoryStore()
    const errors: Error[] = []
    const { send, events } = setup({ store: { ...store, delivered: () => Promise.reject(new Error('lost')) }, onError: (error) => errors.push(error) })
    expect((await send([envelope()])).status).toBe(200)
    expect(events()).toHaveLength(1)
    expect(errors.map((error) => error.message)).toEqual(['lost'])
  })

  it('a batch whose ids another request holds: 503 Retry-After, then once that settles, stored once', async () => {
    const { send, counts, holdUntil } = setup()
    const batch = [envelope(), envelope()]
    const slow = gate()
    holdUntil(slow.promise)
    const first = send(batch)
    await new Promise((resolve) => setTimeout(resolve, 20))
    holdUntil(undefined)
    const second = [batch[1], envelope()]
    const meanwhile = await send(second)
    expect(meanwhile.status).toBe(503)
    expect(meanwhile.headers.get('retry-after')).toBe('2')
    expect(meanwhile.body.error.message).toBe('some events are being stored by another request')
    slow.open()
    expect((await first).status).toBe(200)
    // The tracker sends the same batch again: everything in it is stored by now.
    expect(await send(second)).toMatchObject({ status: 200, body: { accepted: 0, duplicates: 2 } })
    expect([...counts().values()].every((count) => count == 1)).toBe(true)
    expect(counts().size).toBe(3)
  })

  it('the held batch goes to the sink once when the holder failed', async () => {
    const { send, counts, holdUntil, failWith } = setup()
    const batch = [envelope()]
    const slow = gate()
    holdUntil(slow.promise)
    failWith(() => new Error('down'))
    const first = send(batch)
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect((await send(batch)).status).toBe(503)
    slow.open()
    expect((await first).status).toBe(503)
    holdUntil(undefined)
    failWith(undefined)
    expect((await send(batch)).body).toMatchObject({ accepted: 1 })
    expect([...counts().values()]).toEqual([1])
  })

  it('a claim that lapses (claimMs) lets another request deliver the events of a sink that hangs', async () => {
    const { send, holdUntil, counts } = setup({ claimMs: 50 })
    const hung = gate()
    holdUntil(hung.promise)
    const first = send([envelope({ event_id: 'hung' })])
    await new Promise((resolve) => setTimeout(resolve, 80))
    holdUntil(undefined)
    expect((await send([envelope({ event_id: 'hung' })])).body).toMatchObject({ accepted: 1 })
    hung.open()
    await first
    // The window README names: a sink slower than claimMs can be handed an event twice.
    expect(counts().get('hung')).toBe(2)
  })
})

describe('onBatch', () => {
  it('reports the accepted events as stored, the duplicates, the rejected envelopes as they came, and t_sent', async () => {
    const reports: BatchReport[] = []
    const { send } = setup({ onBatch: (report) => reports.push(structuredClone(report)) })
    const event = envelope()
    const bad = { event: 'click-item', properties: {}, extra: true }
    const sentAt = Date.now()
    await send([event, event, bad], { query: '?t_sent=' + sentAt })
    expect(reports).toHaveLength(1)
    const [report] = reports
    expect(report.accepted.map((accepted) => accepted.event_id)).toEqual([event.event_id])
    expect(report.accepted[0]).toMatchObject({ user: { ip: '203.0.113.9' }, received_at: expect.any(Number), t_corrected: expect.any(Number) })
    expect(report.duplicates.map((duplicate) => duplicate.event_id)).toEqual([event.event_id])
    expect(report.rejected).toEqual([{ index: 2, error: 'An API key must be provided.', envelope: bad }])
    expect(report.sentAt).toBe(sentAt)
  })

  it('a throwing onBatch changes no answer and goes to onError', async () => {
    const errors: Error[] = []
    const { send, events } = setup({
      onBatch: () => {
        throw new Error('monitoring down')
      },
      onError: (error) => errors.push(error)
    })
    expect((await send([envelope()])).status).toBe(200)
    expect(events()).toHaveLength(1)
    expect(errors.map((error) => error.message)).toEqual(['monitoring down'])
  })
})

describe('options', () => {
  it('refuses to start without keys or a sink', () => {
    expect(() => createRelay({ keys: [], sink: async () => {} })).toThrow(/keys/)
    expect(() => createRelay({ keys: ['KEY'] } as RelayOptions)).toThrow(/sink/)
  })
})

describe('whatever the body', () => {
  // A seeded generator, so that a failure can be run again.
  function random(seed: number) {
    return () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff
      return seed / 0x7fffffff
    }
  }

  function junk(next: () => number, depth = 0): unknown {
    const pick = Math.floor(next() * 12)
    const string = () => ['', 'KEY', 'click-item', '__proto__', 'x'.repeat(Math.floor(next() * 100)), '\u0000\ud800', 'constructor'][Math.floor(next() * 7)]
    if (depth > 4) return string()
    switch (pick) {
      case 0:
        return null
      case 1:
        return next() * 1e20 - 1e10
      case 2:
        return string()
      case 3:
        return next() < 0.5
      case 4:
        return Array.from({ length: Math.floor(next() * 4) }, () => junk(next, depth + 1))
      case 5:
        return Object.fromEntries(Array.from({ length: Math.floor(next() * 4) }, () => [string(), junk(next, depth + 1)]))
      default: {
        // A valid envelope with a field or two broken, so the checks go past the first one.
        const base: any = envelope({ event: ['click-item', 'purchase', 'view-page', 'add-to-cart'][Math.floor(next() * 4)] })
        for (let index = 0; index < 1 + Math.floor(next() * 2); index++) {
          const field = ['properties', 'user', 'key', 't_client', 'event_id', 'event', 'extra'][Math.floor(next() * 7)]
          base[field] = junk(next, depth + 1)
        }
        return base
      }
    }
  }

  const bodies = (next: () => number): string[] => {
    const nested = (depth: number, open: string, close: string) => open.repeat(depth) + close.repeat(depth)
    return [
      nested(100000, '[', ']'),
      '{"a":'.repeat(50000) + '1' + '}'.repeat(50000),
      // Deep nesting where the rules look (a property) and where they do not (an extra field).
      JSON.stringify([envelope()]).replace('"properties":{', '"properties":{"extra":' + nested(100000, '[', ']') + ','),
      JSON.stringify([envelope()]).replace('"properties":{"rid":"s-1"', '"properties":{"rid":' + nested(100000, '[', ']')),
      '{"__proto__":{"key":"KEY","event":"click-item"},"constructor":{"prototype":{"polluted":1}}}',
      JSON.stringify([envelope()]).replace('"event"', '"__proto__":{"admin":true},"event"'),
      JSON.stringify([envelope({ user: JSON.parse('{"__proto__":{"uid":"u"},"uid":"u","sid":"s"}') })]),
      JSON.stringify([envelope({ properties: { item_id: 'x'.repeat(200000), variant_item_id: 'v' } })]),
      '"' + 'x'.repeat(250000) + '"',
      '\ufeff[]',
      '',
      'null',
      '[null, 1, "x", [], {}]',
      '[' + '1,'.repeat(1500) + '1]',
      ...Array.from({ length: 300 }, () => JSON.stringify(junk(next))),
      ...Array.from({ length: 50 }, () => JSON.stringify(Array.from({ length: 1 + Math.floor(next() * 20) }, () => junk(next))))
    ]
  }

  it('always answers with a Response, and the sink gets only envelopes the rules accept', async () => {
    const errors: Error[] = []
    const { relay, events } = setup({ onError: (error) => errors.push(error) })
    const statuses = new Map<number, number>()
    for (const body of bodies(random(7))) {
      const response = await relay.fetch(new Request(URL_ + '?t_sent=' + Date.now(), { method: 'POST', body }), { remoteAddress: '203.0.113.9' })
      expect(response).toBeInstanceOf(Response)
      expect([200, 400, 401, 403, 413]).toContain(response.status)
      await response.text()
      statuses.set(response.status, (statuses.get(response.status) || 0) + 1)
    }
    expect(({} as any).polluted).toBeUndefined()
    expect(({} as any).admin).toBeUndefined()
    // The mix reached every check: some stored, some refused each way.
    expect(statuses.get(200)).toBeGreaterThan(10)
    expect(statuses.get(400)).toBeGreaterThan(10)
    // Failures, none; what was refused, said once.
    expect(errors.filter((error) => error.name != 'DropNotice')).toEqual([])
    expect(errors.filter((error) => error.name == 'DropNotice')).toHaveLength(1)
    for (const event of events()) {
      expect(Object.keys(event).sort()).toEqual(expect.arrayContaining(['event', 'key', 'properties', 't_client', 'user', 'received_at', 't_corrected']))
      expect(
        Object.keys(event).every((field) => ['event', 'key', 'properties', 't_client', 'user', 'received_at', 't_corrected', 'event_id'].includes(field))
      ).toBe(true)
      expect(event.key).toBe('KEY')
      expect(Number.isFinite(event.t_client)).toBe(true)
      expect(() => validate(event.event, event.properties)).not.toThrow()
      expect(Object.getPrototypeOf(event.user)).toBe(Object.prototype)
      expect(Object.keys(event.user).every((field) => ['uid', 'sid', 'email', 'ip', 'ua', 'lang'].includes(field))).toBe(true)
      expect(() => JSON.stringify(event)).not.toThrow()
    }
  })

  it('a body stream that fails midway is answered, never thrown', async () => {
    const { relay, events } = setup()
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('[{"event":'))
        controller.error(new Error('connection reset'))
      }
    })
    const response = await relay.fetch(new Request(URL_, { method: 'POST', body: stream, duplex: 'half' } as RequestInit))
    expect(response).toBeInstanceOf(Response)
    expect(response.status).toBeGreaterThanOrEqual(400)
    expect(events()).toEqual([])
  })
})
