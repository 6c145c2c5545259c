// @vitest-environment node
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createCollector, KEY_MISSING, messagesOf } from '../../src/collector'
import { createRelay } from '../../src/relay'

type Started = { url: string; file: string; close: () => Promise<void> }
const running: Started[] = []

// `keys: null` starts the collector without the option, as the reference comes.
async function start(
  file = join(mkdtempSync(join(tmpdir(), 'collector-')), 'events.ndjson'),
  maxBodyBytes?: number,
  keys: string[] | null = ['KEY']
): Promise<Started> {
  const collector = createCollector({ file, maxBodyBytes, ...(keys ? { keys } : {}) })
  const server: Server = createServer((request, response) => collector.handle(request, response))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  let closed: Promise<void> | undefined
  const started = {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/v3/feedback`,
    file,
    close: () =>
      (closed ||= new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => {
          collector.close()
          resolve()
        })
      }))
  }
  running.push(started)
  return started
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((started) => started.close()))
})

let counter = 0
const envelope = (overrides: Record<string, unknown> = {}) => ({
  event: 'click-item',
  properties: { rid: 's-1', item_id: '42', variant_item_id: '421' },
  key: 'KEY',
  t_client: 1767261600000,
  user: { uid: 'uid-1', sid: 'sid-1', lang: ['en'] },
  event_id: 'evt-' + ++counter,
  ...overrides
})

const post = async (url: string, body: unknown, contentType = 'text/plain;charset=UTF-8', headers: Record<string, string> = {}) => {
  const response = await fetch(url, {
    method: 'POST',
    body: typeof body == 'string' ? body : JSON.stringify(body),
    headers: { 'content-type': contentType, ...headers }
  })
  return { status: response.status, headers: response.headers, body: await response.json() }
}

const stored = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line))

describe('collector', () => {
  it("keeps a bot's events, marked, where a shop's relay drops them", async () => {
    const { url, file } = await start()
    const headless = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36'
    const firefox = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0'
    expect((await post(url, [envelope()], undefined, { 'user-agent': headless })).body.accepted).toBe(1)
    expect((await post(url, [envelope()], undefined, { 'user-agent': firefox })).body.accepted).toBe(1)
    expect(stored(file).map((event) => [event.user.ua, event.bot])).toEqual([
      [headless, true],
      [firefox, undefined]
    ])
  })

  it('stores a batch, one NDJSON line per event, filling ip and ua from the request', async () => {
    const { url, file } = await start()
    const batch = [envelope(), envelope({ event: 'view-page', properties: { url: 'https://s.example/', ref: '', width: 1, height: 1 } })]
    const answer = await post(url, batch)
    expect(answer).toMatchObject({ status: 200, body: { accepted: 2, duplicates: 0, rejected: [] } })
    expect(answer.headers.get('access-control-allow-origin')).toBe('*')
    const lines = stored(file)
    expect(lines.map((line) => line.event_id)).toEqual(batch.map((event) => event.event_id))
    expect(lines[0]).toMatchObject({ ...batch[0], user: { uid: 'uid-1', sid: 'sid-1', ip: '127.0.0.1', ua: expect.any(String) } })
    expect(lines[0].received_at).toBeGreaterThan(0)
  })

  it('corrects a device clock from the send time the library adds, keeping the raw t_client', async () => {
    const { url, file } = await start()
    const deviceNow = Date.now() - 3600000 // the shopper's clock is an hour slow
    await post(url + '?t_sent=' + deviceNow, [envelope({ t_client: deviceNow - 5000 })])
    const [line] = stored(file)
    expect(line.t_client).toBe(deviceNow - 5000)
    expect(Math.abs(line.t_corrected - (line.received_at - 5000))).toBeLessThan(1000)
    const answer = await fetch(url, { method: 'POST', body: JSON.stringify([envelope()]) })
    expect(answer.headers.get('access-control-expose-headers')).toBe('Retry-After')
  })

  it('accepts the body whatever its content type, and a single envelope', async () => {
    const { url, file } = await start()
    for (const type of ['text/plain;charset=UTF-8', 'application/json', 'application/x-www-form-urlencoded']) {
      expect((await post(url, [envelope()], type)).status).toBe(200)
    }
    expect((await post(url, envelope())).body.accepted).toBe(1)
    expect(stored(file)).toHaveLength(4)
  })

  it('answers CORS preflights for shops on other origins', async () => {
    const { url } = await start()
    const response = await fetch(url, {
      method: 'OPTIONS',
      headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' }
    })
    expect(response.status).toBe(204)
    expect(response.headers.get('access-control-allow-origin')).toBe('*')
    expect(response.headers.get('access-control-allow-methods')).toContain('POST')
    expect(response.headers.get('access-control-allow-headers')).toBe('content-type')
  })

  it.for(['https://staging.shop.example', 'null'])('lets a page of origin %s read its answers: staging shops and Shopify pixels', async (origin) => {
    const { url, file } = await start()
    const response = await fetch(url, { method: 'POST', body: JSON.stringify([envelope()]), headers: { origin } })
    expect(response.status).toBe(200)
    expect(response.headers.get('access-control-allow-origin')).toBe('*')
    expect(response.headers.get('access-control-expose-headers')).toBe('Retry-After')
    // The demo's pages renew the uid themselves: the collector sets no cookie.
    expect(response.headers.get('set-cookie')).toBeNull()
    expect(stored(file)).toHaveLength(1)
  })

  it("takes user.ip from the connection, never from a shopper's forged X-Forwarded-For", async () => {
    const { url, file } = await start()
    await fetch(url, { method: 'POST', body: JSON.stringify([envelope()]), headers: { 'x-forwarded-for': '203.0.113.7', forwarded: 'for=203.0.113.8' } })
    expect(stored(file)[0].user.ip).toBe('127.0.0.1')
  })

  it.each([
    [{ key: undefined }, KEY_MISSING],
    [{ key: '' }, KEY_MISSING],
    [{ event: 'nope' }, 'nope: event must be one of'],
    [{ properties: { item_id: 42, variant_item_id: '1' } }, 'click-item: item_id must be a non-empty string, got 42'],
    [{ properties: undefined }, 'click-item: properties must be an object'],
    [{ t_client: '2026-01-01' }, 'click-item: t_client must be a number of milliseconds'],
    [{ user: undefined }, 'click-item: user is required'],
    [{ user: { uid: 'x'.repeat(33), sid: 's' } }, 'click-item: user.uid must be a string of 1 to 32 characters'],
    [{ user: { uid: 'u' } }, 'click-item: user.sid is required'],
    [{ user: { uid: 'u', sid: 's', ip: 7 } }, 'click-item: user.ip must be a string'],
    [{ user: { uid: 'u', sid: 's', lang: 'en' } }, 'click-item: user.lang must be an array of language codes'],
    [{ event_id: 'e'.repeat(65) }, 'click-item: event_id must be a string of at most 64 characters']
  ])("refuses %o with SPEC's error shape", async (overrides, message) => {
    const { url, file } = await start()
    const answer = await post(url, [envelope(overrides)])
    expect(answer.status).toBe(message == KEY_MISSING ? 401 : 400)
    expect(answer.body.error.message).toContain(message)
    expect(answer.body.rejected).toEqual([{ index: 0, error: expect.stringContaining(message) }])
    expect(stored(file)).toEqual([])
  })

  it('without a keys option takes the demo key only', async () => {
    const { url, file } = await start(undefined, undefined, null)
    expect((await post(url, [envelope({ key: 'some-other-merchants-key' })])).status).toBe(403)
    expect((await post(url, [envelope({ key: 'demo-key' })])).status).toBe(200)
    expect(stored(file).map((event) => event.key)).toEqual(['demo-key'])
  })

  it('with keys, refuses any other key: 403 when no envelope has one of them', async () => {
    const { url, file } = await start(undefined, undefined, ['KEY', 'KEY-2'])
    expect((await post(url, [envelope(), envelope({ key: 'KEY-2' })])).body.accepted).toBe(2)
    const answer = await post(url, [envelope({ key: 'other' }), envelope({ key: undefined })])
    expect(answer.status).toBe(403)
    expect(answer.body).toEqual({
      error: { message: 'The API key is not valid.' },
      accepted: 0,
      duplicates: 0,
      rejected: [
        { index: 0, error: 'The API key is not valid.' },
        { index: 1, error: KEY_MISSING }
      ]
    })
    expect(stored(file)).toHaveLength(2)
  })

  it('says what is wrong with a body that is not JSON', async () => {
    const { url } = await start()
    const answer = await post(url, '[{"event":')
    expect(answer.status).toBe(400)
    expect(answer.body.error.message).toMatch(/^body is not JSON/)
  })

  it('stores the valid part of a mixed batch and reports the rest by index', async () => {
    const { url, file } = await start()
    const good = [envelope(), envelope()]
    const answer = await post(url, [good[0], envelope({ key: undefined }), 'junk', good[1]])
    expect(answer.status).toBe(200)
    expect(answer.body).toEqual({
      accepted: 2,
      duplicates: 0,
      rejected: [
        { index: 1, error: KEY_MISSING },
        { index: 2, error: 'an envelope must be an object' }
      ]
    })
    expect(stored(file).map((line) => line.event_id)).toEqual(good.map((event) => event.event_id))
  })

  it('acknowledges a resent event but stores it once, also across a restart', async () => {
    const first = await start()
    const batch = [envelope(), envelope()]
    await post(first.url, batch)
    expect((await post(first.url, batch)).body).toMatchObject({ accepted: 0, duplicates: 2 })
    await first.close()
    const second = await start(first.file)
    const answer = await post(second.url, [batch[1], envelope()])
    expect(answer).toMatchObject({ status: 200, body: { accepted: 1, duplicates: 1 } })
    expect(stored(first.file)).toHaveLength(3)
  })

  it('answers which unconfirmed event ids it lacks, also across a restart, and only when asked', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'collector-')), 'events.ndjson')
    const first = await start(file)
    const [a, b] = [envelope(), envelope()]
    expect((await post(first.url, [a])).body).not.toHaveProperty('missing')
    await first.close()
    const { url } = await start(file)
    // The shopper's own question (a page of the shop's origin sends its uid cookie).
    const answer = await post(url + '?t_sent=1&unconfirmed=' + encodeURIComponent([a.event_id, b.event_id].join()), [], undefined, { cookie: 'df_uid=uid-1' })
    expect(answer.status).toBe(200)
    expect(answer.body.missing).toEqual([b.event_id])
    // Asked in the same request that brings it again, it counts as stored.
    expect((await post(url + '?unconfirmed=' + b.event_id, [b])).body).toMatchObject({ accepted: 1, missing: [] })
  })

  it('recovers from a line cut short by a crash', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'collector-')), 'events.ndjson')
    const kept = envelope()
    writeFileSync(file, JSON.stringify(kept) + '\n{"event":"click-it')
    const { url } = await start(file)
    expect((await post(url, [kept])).body.duplicates).toBe(1)
    await post(url, [envelope()])
    const lines = readFileSync(file, 'utf8').split('\n')
    expect(JSON.parse(lines[2]).event).toBe('click-item')
  })

  it("reads a data file of several megabytes in chunks at start, lines and characters cut at each chunk's end", async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'collector-')), 'events.ndjson')
    // About 3 MiB of stored events whose text (multi-byte characters) straddles every chunk boundary.
    const events = Array.from({ length: 6000 }, (_, n) => envelope({ properties: { rid: 's-1', item_id: 'ü€😀'.repeat(40) + n, variant_item_id: '1' } }))
    writeFileSync(file, events.map((event) => JSON.stringify(event)).join('\n') + '\n')
    const { url } = await start(file)
    const answer = await post(url, [events[0], events[2999], events[5999], envelope()])
    expect(answer.body).toMatchObject({ accepted: 1, duplicates: 3 })
  })

  it('refuses a body of more than 500 envelopes whole, before checking any', async () => {
    const { url, file } = await start()
    const answer = await post(
      url,
      Array.from({ length: 501 }, () => 1)
    )
    expect(answer).toMatchObject({ status: 413, body: { error: { message: 'more than 500 envelopes in one request' } } })
    expect(existsSync(file) ? stored(file) : []).toEqual([])
  })

  it('answers 413 from the declared length, without waiting for the body', async () => {
    const { url } = await start(undefined, 1024)
    const { port } = new URL(url)
    const reply = await new Promise<string>((resolve) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        // Declares 10 MB but sends only the headers: the answer must come anyway.
        socket.write('POST /v3/feedback HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 10000000\r\n\r\n')
      })
      let data = ''
      // Complete once its declared body is there: the client has its answer.
      socket.on('data', (chunk) => {
        data += chunk
        if (data.endsWith('}}')) {
          socket.destroy()
          resolve(data)
        }
      })
      socket.on('close', () => resolve(data))
    })
    expect(reply).toMatch(/^HTTP\/1.1 413/)
    expect(reply).toContain('{"error":{"message":"body is larger than 1024 bytes"}}')
  })

  it.for(['content-length', 'chunked'])('a 10 MB upload sent with %s reads its 413, 10 tries of 10', async (framing) => {
    const { url } = await start(undefined, 256 * 1024)
    const { port } = new URL(url)
    const upload = Buffer.alloc(10 * 1024 * 1024, 'a')
    // A plain client: it writes its whole request, then reads the answer. Closing on the rest
    // of the body would reset the connection and the answer with it.
    const attempt = () =>
      new Promise<string>((resolve) => {
        const socket = connect(Number(port), '127.0.0.1')
        let reply = ''
        socket.on('data', (chunk) => (reply += chunk))
        socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code + ' after ' + JSON.stringify(reply.slice(0, 12))))
        socket.on('close', () => resolve(reply.split('\r\n')[0] + ' ' + reply.slice(reply.indexOf('\r\n\r\n') + 4)))
        const chunked = framing == 'chunked'
        socket.write('POST /v3/feedback HTTP/1.1\r\nHost: x\r\n' + (chunked ? 'Transfer-Encoding: chunked' : 'Content-Length: ' + upload.length) + '\r\n\r\n')
        if (!chunked) return socket.write(upload)
        for (let at = 0; at < upload.length; at += 65536) socket.write('10000\r\n' + upload.subarray(at, at + 65536) + '\r\n')
        socket.write('0\r\n\r\n')
      })
    const replies: string[] = []
    for (let n = 0; n < 10; n++) replies.push(await attempt())
    expect(replies).toEqual(Array(10).fill('HTTP/1.1 413 Payload Too Large {"error":{"message":"body is larger than 262144 bytes"}}'))
  })

  it('answers 413 to a streamed body once it passes the limit', async () => {
    const { url } = await start(undefined, 1024)
    const answer = await post(url, JSON.stringify([envelope({ properties: { item_id: 'x'.repeat(5000), variant_item_id: '1' } })]))
    expect(answer.status).toBe(413)
  })

  it('never crashes on odd bodies and keeps working', async () => {
    const { url, file } = await start()
    const odd = [
      '',
      'null',
      '0',
      '"text"',
      '{}',
      '[]',
      '[[]]',
      '[null]',
      '{"__proto__":{"key":"x"}}',
      '\u0000\uffff',
      '[' + '['.repeat(5000) + ']'.repeat(5000) + ']'
    ]
    for (const body of odd) {
      const response = await fetch(url, { method: 'POST', body })
      expect(response.status).toBeLessThan(500)
    }
    expect((await post(url, [envelope()])).body.accepted).toBe(1)
    expect(stored(file)).toHaveLength(1)
  })

  it('stores every event exactly once under 50 concurrent clients × 100 events, resends included', async () => {
    const { url, file } = await start()
    const clients = Array.from({ length: 50 }, (_, client) =>
      Array.from({ length: 100 }, (_, i) => envelope({ event_id: `c${client}-e${i}`, user: { uid: 'u' + client, sid: 's' + client } }))
    )
    await Promise.all(
      clients.map(async (events) => {
        for (let i = 0; i < events.length; i += 20) {
          const batch = events.slice(i, i + 20)
          // Each batch goes twice at once, as a retry racing its original would.
          await Promise.all([post(url, batch), post(url, batch)])
        }
      })
    )
    const ids = stored(file).map((line) => line.event_id)
    expect(ids).toHaveLength(5000)
    expect(new Set(ids).size).toBe(5000)
  })

  it("turns any relay's batch into the inspector's messages, so the inspector can follow a shop's relay too", async () => {
    const messages: { type: string; envelope: Record<string, unknown>; t_sent?: unknown; error?: string }[] = []
    const relay = createRelay({ keys: ['KEY'], sink: async () => {}, onBatch: (report) => messages.push(...messagesOf(report)) })
    const [first, second] = [envelope(), envelope()]
    const post = (body: unknown, query = '') => relay.fetch(new Request('http://shop.example/df' + query, { method: 'POST', body: JSON.stringify(body) }))
    await post([first], '?t_sent=Infinity')
    await post([{ ...first, event: 'x'.repeat(400) }, first, second], '?t_sent=1767261600000')
    expect(messages.map(({ type }) => type)).toEqual(['accepted', 'accepted', 'duplicate', 'rejected'])
    expect(messages[0]).toMatchObject({ envelope: { event_id: first.event_id, received_at: expect.any(Number) }, t_sent: null })
    expect(messages[1].t_sent).toBe(1767261600000)
    expect(messages[2].envelope).not.toHaveProperty('received_at')
    expect(messages[3].error!.length).toBeLessThan(310)
    expect(messages[3].envelope).toMatchObject({ has_key: true, user: { uid: 'uid-1', sid: 'sid-1' } })
  })

  it('keeps an event it acknowledged when killed with SIGKILL right after the answer', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'collector-')), 'events.ndjson')
    const program = `
      import { createServer } from 'node:http'
      import { createCollector } from './dist/collector.mjs'
      const collector = createCollector({ file: ${JSON.stringify(file)}, keys: ['KEY'] })
      const server = createServer((request, response) => collector.handle(request, response))
      server.listen(0, '127.0.0.1', () => console.log(server.address().port))`
    const child = spawn(process.execPath, ['--input-type=module', '-e', program], { cwd: process.cwd() })
    const port = await new Promise<string>((resolve) => child.stdout.once('data', (data) => resolve(String(data).trim())))
    const event = envelope()
    const response = await fetch(`http://127.0.0.1:${port}/v3/feedback`, { method: 'POST', body: JSON.stringify([event]) })
    child.kill('SIGKILL')
    expect(response.status).toBe(200)
    await new Promise((resolve) => child.once('exit', resolve))
    expect(stored(file).map((line) => line.event_id)).toEqual([event.event_id])
  })
})
