// @vitest-environment node
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { type IncomingMessage, type Server } from 'node:http'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { sleep, waitFor } from '../support/wait'
import { readFeed } from '../support/feed'
// @ts-expect-error plain ES module without types
import { startDemo } from '../../demo/server.mjs'
import { quietConsole } from '../support/console'

// The demo server over real HTTP on 127.0.0.1, treating every request as possibly hostile.
type Demo = { url: string; inspectorUrl: string; inspectorToken: string; server: Server; close: () => Promise<void> }
const running: Demo[] = []
let file: string

async function start(options: Record<string, unknown> = {}): Promise<Demo> {
  file = join(mkdtempSync(join(tmpdir(), 'demo-server-')), 'events.ndjson')
  const demo: Demo = await startDemo({ port: 0, dataFile: file, ...options })
  running.push(demo)
  return demo
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((demo) => demo.close()))
})

let counter = 0
const event = (overrides: Record<string, unknown> = {}) => ({
  event: 'click-item',
  properties: { rid: 's-1', item_id: '42', variant_item_id: '421' },
  key: 'demo-key',
  t_client: 1767261600000,
  user: { uid: 'uid-1', sid: 'sid-1' },
  event_id: 'evt-' + ++counter,
  ...overrides
})

// A shopper's browser: Node's fetch says `node`, whose events the collector keeps marked as a bot's.
const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0'

const post = async (demo: Demo, body: unknown, query = '') => {
  const response = await fetch(demo.url + '/v3/feedback' + query, {
    method: 'POST',
    headers: { 'user-agent': BROWSER },
    body: typeof body == 'string' ? body : JSON.stringify(body)
  })
  return { status: response.status, body: await response.json() }
}

const stored = () =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line))

/**
 * Sends `text` as it is over a fresh TCP connection (fetch would normalise `//` away) and
 * resolves with what came back once the server closes, or after `timeout` ms (status 0).
 */
function raw(demo: Demo, text: string, timeout = 5000) {
  return new Promise<{ status: number; text: string }>((resolve) => {
    let data = ''
    let done = false
    const finish = () => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.destroy()
      resolve({ status: Number((/^HTTP\/1\.1 (\d{3})/.exec(data) || [])[1] || 0), text: data })
    }
    const timer = setTimeout(finish, timeout)
    const socket = connect(Number(new URL(demo.url).port), '127.0.0.1', () => socket.write(text))
    socket.setEncoding('utf8')
    socket.on('data', (chunk) => (data += chunk))
    socket.on('close', finish)
    socket.on('error', finish)
  })
}
const rawGet = (demo: Demo, target: string) => raw(demo, `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)

/** The server still serves a page and stores an event. */
async function alive(demo: Demo) {
  expect((await fetch(demo.url + '/cart')).status).toBe(200)
  expect((await post(demo, [event()])).status).toBe(200)
}

/** An inspector feed reader, signed in with the feed's `token` query. */
const feed = (demo: Demo) => readFeed(demo.url, demo.inspectorToken)

const json = (value: unknown) => encodeURIComponent(JSON.stringify(value))
const HOSTILE = { toString: 1 }
// The user every discovery request carries (SPEC "Endpoints"), as a body field and as the
// service's SDK writes it into a query (user[uid]=…&user[sid]=…).
const SHOPPER = { uid: 'uid-1', sid: 'sid-1' }
const SHOPPER_QUERY = '&user%5Buid%5D=uid-1&user%5Bsid%5D=sid-1'

describe('6. no single request takes the server down', () => {
  it.each(['//', '//%'])('GET %s (a target URL parsing refuses) is answered 400', async (target) => {
    const demo = await start()
    expect((await rawGet(demo, target)).status).toBe(400)
    await alive(demo)
  })

  it('a discovery item id that is not valid percent-encoding is answered 400, by GET and POST', async () => {
    const demo = await start()
    expect((await rawGet(demo, '/v3/recommend/items/%ZZ/viewed/viewed?key=demo-key' + SHOPPER_QUERY)).status).toBe(400)
    const posted = await fetch(demo.url + '/v3/recommend/items/%ZZ/viewed/bought', {
      method: 'POST',
      headers: { 'x-key': 'demo-key' },
      body: JSON.stringify({ user: SHOPPER })
    })
    expect(posted.status).toBe(400)
    await alive(demo)
  })

  it('an object where q belongs is refused, also by JSONP', async () => {
    const demo = await start()
    const plain = await rawGet(demo, '/v3/autocomplete?key=demo-key' + SHOPPER_QUERY + '&q=' + json(HOSTILE))
    expect(plain.status).toBe(400)
    const jsonp = await rawGet(demo, '/v3/autocomplete?key=demo-key' + SHOPPER_QUERY + '&callback=cb&q=' + json(HOSTILE))
    // JSONP cannot read a status: the error is in the call's argument.
    expect(jsonp.text).toContain('cb({"error":{"message":"q must be a string or a number"}})')
    // A field named __proto__ never becomes the prototype of the others: it is left out.
    const smuggled = await fetch(demo.url + '/v3/autocomplete?key=demo-key' + SHOPPER_QUERY + '&__proto__=' + json({ q: HOSTILE }))
    expect(smuggled.status).toBe(200)
    expect((await smuggled.json()).meta.q).toBe('')
    await alive(demo)
  })

  it('an object where offset belongs is refused, also on the slow slot whose answer waits for a timer', async () => {
    const demo = await start()
    expect((await rawGet(demo, '/v3/recommend/items/newest?key=demo-key' + SHOPPER_QUERY + '&offset=' + json(HOSTILE))).status).toBe(400)
    expect((await rawGet(demo, '/v3/recommend/slow?key=demo-key' + SHOPPER_QUERY + '&offset=' + json(HOSTILE))).status).toBe(400)
    const posted = await fetch(demo.url + '/v3/recommend/items/newest', {
      method: 'POST',
      headers: { 'x-key': 'demo-key' },
      body: JSON.stringify({ user: SHOPPER, limit: HOSTILE })
    })
    expect(posted.status).toBe(400)
    await alive(demo)
  })

  it('a user whose uid is an object is refused on the recently-viewed route', async () => {
    const demo = await start()
    // The route compares uids only once a view-page is known.
    const view = event({
      event: 'view-page',
      properties: { url: 'http://s.example/product/1001', ref: '', width: 1, height: 1, item_id: '1001', variant_item_id: '1001-38' }
    })
    expect((await post(demo, [view])).status).toBe(200)
    expect((await rawGet(demo, '/v3/recommend/items/viewed/latest?key=demo-key&user=' + json({ uid: HOSTILE, sid: 's' }))).status).toBe(400)
    await alive(demo)
  })

  it('a posted cart whose ids are objects makes an empty order', async () => {
    const demo = await start()
    const cart = JSON.stringify([
      { item_id: HOSTILE, variant_item_id: HOSTILE, quantity: 1 },
      { item_id: '1001', variant_item_id: HOSTILE, quantity: 1 }
    ])
    const response = await fetch(demo.url + '/checkout', { method: 'POST', body: new URLSearchParams({ cart }), redirect: 'manual' })
    expect(response.status).toBe(303)
    await alive(demo)
  })

  it('a rejected envelope nested 100,000 deep reaches a later inspector as a small summary', async () => {
    const demo = await start()
    const deep = '['.repeat(100000) + ']'.repeat(100000)
    const answer = await post(demo, `[{"event":"click-item","key":"demo-key","t_client":1,"properties":${deep},"user":{"uid":"u","sid":"s"}}]`)
    expect(answer.status).toBe(400)
    const reader = await feed(demo)
    expect(reader.status).toBe(200)
    await waitFor(() => reader.messages.some((message) => message.type == 'rejected'), 'the rejected envelope')
    const rejected = reader.messages.find((message) => message.type == 'rejected')
    expect(rejected.error).toBe('click-item: properties must be an object, got array')
    expect(JSON.stringify(rejected).length).toBeLessThan(1000)
    reader.close()
    await alive(demo)
  })

  it('a failing handler answers 500 for its own request only', async () => {
    const demo = await start()
    const logged = quietConsole()
    // Every hostile input above is refused on purpose; this forces a fault no check foresaw,
    // as a bug would: a header that is not a string.
    demo.server.prependListener('request', (request: IncomingMessage) => {
      if (request.url == '/cart?fail') request.headers.accept = Symbol('not text') as never
    })
    expect((await rawGet(demo, '/cart?fail')).status).toBe(500)
    expect(String(logged.mock.calls[0])).toContain('GET /cart failed')
    logged.mockRestore()
    await alive(demo)
  })
})

describe('7. a valid event with a deep extra field', () => {
  it('is stored without the field', async () => {
    const demo = await start()
    const deep = '['.repeat(100000) + ']'.repeat(100000)
    const valid = event()
    const body = JSON.stringify([valid]).replace('"variant_item_id":"421"', `"variant_item_id":"421","extra":${deep}`)
    const answer = await post(demo, body)
    expect(answer).toEqual({ status: 200, body: { accepted: 1, duplicates: 0, rejected: [] } })
    expect(stored().map((line) => line.properties)).toEqual([valid.properties])
  })
})

describe('8. only what the rules accept is stored and published', () => {
  it('drops __proto__, constructor and extra keys at every level', async () => {
    const demo = await start()
    const reader = await feed(demo)
    const body =
      '[{"__proto__":{"admin":true},"constructor":{"prototype":{"admin":true}},"admin":true,' +
      '"event":"click-item","key":"demo-key","t_client":1767261600000,"event_id":"e-clean",' +
      '"properties":{"rid":"s-1","item_id":"42","variant_item_id":"421","__proto__":{"x":1},"constructor":1,"extra":"x"},' +
      '"user":{"uid":"u","sid":"s","email":"a@b.example","lang":["en"],"__proto__":{"x":1},"constructor":1,"is_admin":true}}]'
    expect((await post(demo, body)).status).toBe(200)
    const text = readFileSync(file, 'utf8')
    for (const word of ['__proto__', 'constructor', 'admin', 'extra']) expect(text).not.toContain(word)
    const [line] = stored()
    expect(Object.keys(line).sort()).toEqual(['event', 'event_id', 'key', 'properties', 'received_at', 't_client', 't_corrected', 'user'])
    expect(line.properties).toEqual({ rid: 's-1', item_id: '42', variant_item_id: '421' })
    expect(line.user).toEqual({ uid: 'u', sid: 's', email: 'a@b.example', lang: ['en'], ip: '127.0.0.1', ua: expect.any(String) })
    // What the inspector sees of an accepted event is what was stored.
    await waitFor(() => reader.messages.some((message) => message.type == 'accepted'), 'the accepted event')
    expect(reader.messages.find((message) => message.type == 'accepted').envelope).toEqual(line)
    reader.close()
  })

  it('publishes a rejected envelope as a bounded summary of primitives', async () => {
    const demo = await start()
    const reader = await feed(demo)
    const properties = Object.fromEntries(Array.from({ length: 200 }, (_, i) => ['field' + i, 'x'.repeat(1000)]))
    const hostile = {
      ...event({ event: 'e'.repeat(5000), properties: { ...properties, nested: { a: 1 }, rid: HOSTILE }, user: { uid: HOSTILE, sid: 's', extra: 'x' } })
    }
    expect((await post(demo, [hostile])).status).toBe(400)
    await waitFor(() => reader.messages.some((message) => message.type == 'rejected'), 'the rejected envelope')
    const rejected = reader.messages.find((message) => message.type == 'rejected')
    expect(JSON.stringify(rejected).length).toBeLessThan(8000)
    const summary = rejected.envelope
    expect(Object.keys(summary.user).sort()).toEqual(['sid', 'uid'])
    for (const value of [...Object.values(summary.properties), ...Object.values(summary.user), summary.event]) {
      expect(value === null || typeof value != 'object').toBe(true)
    }
    expect(summary.event.length).toBeLessThan(300)
    reader.close()
  })
})

describe('9. the send time only corrects a clock when it is plausible', () => {
  it.each([['1e309'], ['-5'], ['abc'], [String(Date.now() - 2 * 864e5)], [String(Date.now() + 2 * 864e5)]])(
    't_sent=%s leaves t_corrected = t_client',
    async (sent) => {
      const demo = await start()
      expect((await post(demo, [event()], '?t_sent=' + sent)).status).toBe(200)
      const [line] = stored()
      expect(line.t_corrected).toBe(line.t_client)
    }
  )

  it('a t_sent within a day still corrects', async () => {
    const demo = await start()
    await post(demo, [event()], '?t_sent=' + (Date.now() - 3600000))
    const [line] = stored()
    expect(Math.abs(line.t_corrected - line.t_client - 3600000)).toBeLessThan(1000)
  })
})

describe('10. inspector feeds and backpressure', () => {
  it('drops a feed whose reader never reads, owing it at most about 1 MiB', async () => {
    const demo = await start()
    const served: Socket[] = []
    demo.server.on('connection', (socket: Socket) => served.push(socket))
    const reader = connect(Number(new URL(demo.url).port), '127.0.0.1')
    await once(reader, 'connect')
    // Never reads: what the server writes piles up in the kernel, then in the server.
    reader.pause()
    reader.write(`GET /inspector/events?token=${encodeURIComponent(demo.inspectorToken)} HTTP/1.1\r\nHost: x\r\n\r\n`)
    await waitFor(() => served.some((socket) => socket.remotePort == reader.localPort), 'the feed connection')
    const socket = served.find((candidate) => candidate.remotePort == reader.localPort)!
    const view = { url: 'http://s.example/' + 'x'.repeat(2000), ref: '', width: 1, height: 1 }
    let most = 0
    // At most 40 MB of events: far more than loopback buffers hold.
    for (let batch = 0; batch < 200 && !socket.destroyed; batch++) {
      const answer = await post(
        demo,
        Array.from({ length: 100 }, () => event({ event: 'view-page', properties: view }))
      )
      expect(answer.status).toBe(200)
      most = Math.max(most, socket.writableLength)
    }
    expect(socket.destroyed).toBe(true)
    expect(most).toBeLessThan(1024 * 1024 + 64 * 1024)
    reader.destroy()
    const fresh = await feed(demo)
    expect(fresh.status).toBe(200)
    fresh.close()
    await alive(demo)
  }, 60000)
})

describe('11. request timeouts', () => {
  /**
   * Sends `text` as raw() does and tells whether the server's answer came after a timer of
   * `ms`, started with the request, had fired. Both run on this process's event loop, which
   * runs due timers in the order they fall due and the socket's close after them, so the order
   * holds however busy the machine: no two clock readings are compared.
   */
  async function stallPast(demo: Demo, text: string, ms: number) {
    const order: string[] = []
    setTimeout(() => order.push('timer'), ms)
    const answer = await raw(demo, text)
    order.push('answer')
    return { ...answer, afterTimer: order[0] == 'timer' }
  }

  it('closes a POST whose body stalls once the request timeout passes; an inspector feed stays open', async () => {
    const demo = await start({ requestTimeout: 1000, headersTimeout: 500 })
    const reader = await feed(demo)
    // 408 is the server's answer: raw() gives up after 5 s with status 0.
    const stalled = await stallPast(demo, 'POST /v3/feedback HTTP/1.1\r\nHost: x\r\nContent-Length: 200\r\n\r\n' + '['.padEnd(100, ' '), 900)
    expect(stalled).toMatchObject({ status: 408, afterTimer: true })
    // The feed has been open for longer than the request timeout, and still delivers.
    await sleep(500)
    expect((await post(demo, [event({ event_id: 'after-timeout' })])).status).toBe(200)
    await waitFor(() => reader.messages.some((message) => message.envelope.event_id == 'after-timeout'), 'the event on the feed')
    expect(reader.isClosed()).toBe(false)
    reader.close()
  })

  it('closes a connection whose headers never end once the headers timeout passes, well before a stalled body’s request timeout', async () => {
    // 1.5 s apart: the headers timeout, not the request timeout, closes the first.
    const demo = await start({ requestTimeout: 2000, headersTimeout: 500 })
    const closed: string[] = []
    const closing =
      <T>(name: string) =>
      (answer: T) => {
        closed.push(name)
        return answer
      }
    const headers = stallPast(demo, 'POST /v3/feedback HTTP/1.1\r\nHost: x\r\n', 400).then(closing('headers'))
    const body = raw(demo, 'POST /v3/feedback HTTP/1.1\r\nHost: x\r\nContent-Length: 200\r\n\r\n[').then(closing('body'))
    expect(await headers).toMatchObject({ status: 408, afterTimer: true })
    expect((await body).status).toBe(408)
    expect(closed).toEqual(['headers', 'body'])
  })
})

describe('12. access', () => {
  it('the collector takes the demo key, refuses a wrong key with 403 and a missing one with 401', async () => {
    const demo = await start()
    expect((await post(demo, [event()])).status).toBe(200)
    const wrong = await post(demo, [event({ key: 'other' })])
    expect(wrong).toEqual({
      status: 403,
      body: { error: { message: 'The API key is not valid.' }, accepted: 0, duplicates: 0, rejected: [{ index: 0, error: 'The API key is not valid.' }] }
    })
    const missing = await post(demo, [event({ key: undefined })])
    expect(missing.status).toBe(401)
    expect(missing.body.error).toEqual({ message: 'An API key must be provided.' })
    const mixed = await post(demo, [event(), event({ key: 'other' })])
    expect(mixed).toMatchObject({ status: 200, body: { accepted: 1, rejected: [{ index: 1, error: 'The API key is not valid.' }] } })
    expect(stored()).toHaveLength(2)
  })

  it('more keys come from the keys option, for the collector and the discovery routes', async () => {
    const demo = await start({ keys: ['shop-a', 'shop-b'] })
    for (const key of ['demo-key', 'shop-a', 'shop-b']) expect((await post(demo, [event({ key })])).status).toBe(200)
    expect((await post(demo, [event({ key: 'shop-c' })])).status).toBe(403)
    expect((await fetch(demo.url + '/v3/recommend/items/newest?key=shop-b' + SHOPPER_QUERY)).status).toBe(200)
    expect((await fetch(demo.url + '/v3/recommend/items/newest?key=shop-c' + SHOPPER_QUERY)).status).toBe(403)
  })

  it('the inspector and its feed need the token; the token URL sets a strict HttpOnly cookie', async () => {
    const demo = await start()
    expect(demo.inspectorToken.length).toBeGreaterThanOrEqual(20)
    expect(demo.inspectorUrl).toBe(demo.url + '/inspector?token=' + encodeURIComponent(demo.inspectorToken))
    const other = await start()
    expect(other.inspectorToken).not.toBe(demo.inspectorToken)
    for (const path of [
      '/inspector',
      '/inspector/events',
      '/inspector?token=wrong',
      '/inspector/events?token=wrong',
      '/inspector?token=' + other.inspectorToken
    ]) {
      const response = await fetch(demo.url + path)
      expect(response.status, path).toBe(401)
      expect(response.headers.get('content-type')).toMatch(/^text\/plain/)
      expect(await response.text()).toContain('terminal')
    }
    const login = await fetch(demo.inspectorUrl, { redirect: 'manual' })
    expect(login.status).toBe(303)
    expect(login.headers.get('location')).toBe('/inspector')
    const cookie = login.headers.get('set-cookie')!
    expect(cookie.split('; ').slice(1).sort()).toEqual(['HttpOnly', 'Path=/inspector', 'SameSite=Strict'])
    const session = { cookie: cookie.split(';')[0] }
    const page = await fetch(demo.url + '/inspector', { headers: session })
    expect(page.status).toBe(200)
    expect(await page.text()).toContain('EventSource')
    const stream = await fetch(demo.url + '/inspector/events', { headers: session })
    expect(stream.status).toBe(200)
    expect(stream.headers.get('content-type')).toBe('text/event-stream')
    await stream.body!.cancel()
    expect((await fetch(demo.url + '/inspector', { headers: { cookie: session.cookie + 'x' } })).status).toBe(401)
    // The demo listens on 127.0.0.1 only: the store's links to the inspector carry its token, and open it.
    const link = /<a href="(\/inspector[^"]*)"/.exec(await (await fetch(demo.url + '/cart')).text())![1]
    expect(link).toBe('/inspector?token=' + encodeURIComponent(demo.inspectorToken))
    expect((await fetch(demo.url + link.replaceAll('&amp;', '&'), { redirect: 'manual' })).status).toBe(303)
  })

  it('listening beyond this machine, the store keeps plain links: its pages would hand out the token', async () => {
    const demo = await start({ host: '0.0.0.0' })
    const local = demo.url.replace('0.0.0.0', '127.0.0.1')
    const page = await (await fetch(local + '/cart')).text()
    expect(page).toContain('<a href="/inspector" target="_blank">')
    expect(page).not.toContain(demo.inspectorToken)
  })

  it('the command line reads COLLECTOR_KEYS, COLLECTOR_KEYS_FILE and INSPECTOR_TOKEN and prints the inspector URL', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'demo-cli-'))
    writeFileSync(join(dir, 'keys'), 'shop-c\n\n  shop-d  \n')
    const child = spawn(process.execPath, ['demo/server.mjs'], {
      env: {
        ...process.env,
        PORT: '0',
        DATA_FILE: join(dir, 'events.ndjson'),
        COLLECTOR_KEYS: 'shop-a, shop-b',
        COLLECTOR_KEYS_FILE: join(dir, 'keys'),
        INSPECTOR_TOKEN: 't0ken'
      }
    })
    try {
      let output = ''
      child.stdout.on('data', (data) => (output += data))
      await waitFor(() => output.includes('Ctrl-C'), 'the banner')
      const url = /Store: +(http:\/\/\S+)\//.exec(output)![1]
      expect(output).toContain(`Inspector:  ${url}/inspector?token=t0ken\n`)
      const demo = { url } as Demo
      for (const key of ['demo-key', 'shop-a', 'shop-b', 'shop-c', 'shop-d']) expect((await post(demo, [event({ key })])).status, key).toBe(200)
      expect((await post(demo, [event({ key: 'shop-e' })])).status).toBe(403)
      expect((await fetch(url + '/inspector?token=t0ken', { redirect: 'manual' })).status).toBe(303)
    } finally {
      child.kill('SIGTERM')
      await once(child, 'exit')
    }
  })
})

describe('13. the store serves its own files from a fixed list', () => {
  it('serves every script and style its pages link to, each with its content type', async () => {
    const demo = await start()
    const linked = new Set<string>()
    for (const page of ['/', '/product/1003', '/cart', '/spa']) {
      const html = await (await fetch(demo.url + page)).text()
      for (const [, path] of html.matchAll(/(?:src|href)="(\/[^"]+\.(?:css|js|mjs))"/g)) linked.add(path)
    }
    expect([...linked].filter((path) => path.startsWith('/store/')).sort()).toEqual([
      '/store/cart-page.js',
      '/store/cart.js',
      '/store/home.js',
      '/store/product.js',
      '/store/search-and-shelves.js',
      '/store/spa.mjs',
      '/store/store.css'
    ])
    for (const path of linked) {
      const response = await fetch(demo.url + path)
      expect(response.status, path).toBe(200)
      expect(response.headers.get('content-type'), path).toBe(path.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8')
    }
  })

  it('answers 404 to any other path under /store/, also to one that climbs out of the folder', async () => {
    const demo = await start()
    for (const target of [
      '/store/',
      '/store/x.js',
      '/store/../store.mjs',
      '/store/%2e%2e/store.mjs',
      '/store/..%2fstore.mjs',
      '/store/cart.js/..',
      '/store/store.css/'
    ]) {
      expect((await rawGet(demo, target)).status, target).toBe(404)
    }
    await alive(demo)
  })

  it("a body past its route's limit is answered, and the rest of it read away", async () => {
    const demo = await start()
    const search = await fetch(demo.url + '/v3/autocomplete', {
      method: 'POST',
      headers: { 'x-key': 'demo-key' },
      body: JSON.stringify({ q: 'x'.repeat(70000) })
    })
    expect(search.status).toBe(400)
    expect(await search.json()).toEqual({ error: { message: 'body is longer than 65536 characters' } })
    const checkout = await fetch(demo.url + '/checkout', {
      method: 'POST',
      body: new URLSearchParams({ cart: '[]', more: 'x'.repeat(200000) }),
      redirect: 'manual'
    })
    expect(checkout.status).toBe(303)
    expect((await fetch(demo.url + checkout.headers.get('location')!)).status).toBe(200)
    await alive(demo)
  })
})

describe("14. the discovery routes read what the service's SDK sends, and require the user", () => {
  const ROUTES = [
    '/v3/autocomplete',
    '/v3/search/content',
    '/v3/smart-collection/all',
    '/v3/recommend/home',
    '/v3/recommend/items/newest',
    '/v3/recommend/items/trending',
    '/v3/recommend/items/featured',
    '/v3/recommend/items/viewed/latest',
    '/v3/recommend/items/1001/viewed/viewed',
    '/v3/recommend/items/1001/viewed/bought',
    '/v3/recommend/items/1001,1002/bought/bought'
  ]
  const get = async (demo: Demo, path: string, query: string) => {
    const response = await fetch(demo.url + path + '?key=demo-key' + query)
    return { status: response.status, body: await response.json() }
  }
  const ids = (answer: { body: { items: { id: string }[] } }) => answer.body.items.map((item) => item.id)

  it("a GET reads the SDK's bracket encoding and a JSON text per field alike", async () => {
    const demo = await start()
    const brackets = await get(demo, '/v3/recommend/items/newest', SHOPPER_QUERY + '&limit=2')
    const perField = await get(demo, '/v3/recommend/items/newest', '&user=' + json(SHOPPER) + '&limit=2')
    expect(brackets.body.meta).toMatchObject({ user_id: 'uid-1', limit: 2 })
    expect(perField.body.meta).toMatchObject({ user_id: 'uid-1', limit: 2 })
    expect(ids(brackets)).toEqual(ids(perField))
    // A sort rule in brackets (sort[0][field]=price&sort[0][order]=desc) orders the collection and is echoed.
    const unsorted = await get(demo, '/v3/smart-collection/all', SHOPPER_QUERY)
    const sorted = await get(demo, '/v3/smart-collection/all', SHOPPER_QUERY + '&sort%5B0%5D%5Bfield%5D=price&sort%5B0%5D%5Border%5D=desc')
    expect(sorted.body.meta.sort).toEqual([{ field: 'price', order: 'desc' }])
    expect(ids(sorted)).not.toEqual(ids(unsorted))
    const prices = sorted.body.items.map((item: { price: number[] }) => item.price[0])
    expect(prices).toEqual([...prices].sort((a, b) => b - a))
    // A repeated parameter: the last one counts, as before.
    expect((await get(demo, '/v3/autocomplete', SHOPPER_QUERY + '&q=boot&q=shirt')).body.meta.q).toBe('shirt')
  })

  it("trending and featured answer at the SDK's routes, as the stores' default slots do", async () => {
    const demo = await start()
    for (const kind of ['trending', 'featured']) {
      const sdkRoute = await get(demo, '/v3/recommend/items/' + kind, SHOPPER_QUERY + '&limit=3')
      expect(sdkRoute.status).toBe(200)
      expect(sdkRoute.body.meta).toMatchObject({ user_id: 'uid-1', limit: 3, rid: expect.stringMatching(/^r-/) })
      expect(ids(sdkRoute)).toHaveLength(3)
      expect(ids(sdkRoute)).toEqual(ids(await get(demo, '/v3/recommend/' + kind, SHOPPER_QUERY + '&limit=3')))
    }
    const trending = await get(demo, '/v3/recommend/items/trending', SHOPPER_QUERY)
    const featured = await get(demo, '/v3/recommend/items/featured', SHOPPER_QUERY)
    expect(ids(trending)).not.toEqual(ids(featured))
  })

  it.each(ROUTES)("%s refuses a request without user with 400 and SPEC's error, by POST, GET and JSONP", async (route) => {
    const demo = await start()
    const posted = await fetch(demo.url + route, { method: 'POST', headers: { 'x-key': 'demo-key' }, body: JSON.stringify({ t_client: 1, q: 'boot' }) })
    expect(posted.status).toBe(400)
    expect(await posted.json()).toEqual({ error: { message: 'user is required' } })
    expect(await get(demo, route, '&t_client=1')).toEqual({ status: 400, body: { error: { message: 'user is required' } } })
    const jsonp = await fetch(demo.url + route + '?key=demo-key&t_client=1&callback=cb')
    expect(await jsonp.text()).toBe('cb({"error":{"message":"user is required"}})')
    // With the user, the same request is answered.
    expect((await get(demo, route, '&t_client=1' + SHOPPER_QUERY)).status).toBe(200)
  })

  it.each([
    ['a user without sid', '&user%5Buid%5D=uid-1', { user: { uid: 'uid-1' } }, 'user.sid is required'],
    ['a user without uid', '&user%5Bsid%5D=sid-1', { user: { sid: 'sid-1' } }, 'user.uid is required'],
    ['an empty uid', '&user%5Buid%5D=&user%5Bsid%5D=sid-1', { user: { uid: '', sid: 'sid-1' } }, 'user.uid is required'],
    ['a user that is text', '&user=me', { user: 'me' }, 'user must be an object'],
    ['a sid that is a number', '&user=' + json({ uid: 'u', sid: 7 }), { user: { uid: 'u', sid: 7 } }, 'user.sid must be a string']
  ])('%s is refused with 400 naming the field, by GET and POST', async (_, query, body, message) => {
    const demo = await start()
    expect(await get(demo, '/v3/recommend/items/newest', query)).toEqual({ status: 400, body: { error: { message } } })
    const posted = await fetch(demo.url + '/v3/recommend/items/newest', { method: 'POST', headers: { 'x-key': 'demo-key' }, body: JSON.stringify(body) })
    expect({ status: posted.status, body: await posted.json() }).toEqual({ status: 400, body: { error: { message } } })
  })

  it('a hostile query is refused past its bounds, and never reaches the object prototype', async () => {
    const demo = await start()
    const refused = async (query: string) => (await get(demo, '/v3/recommend/items/newest', SHOPPER_QUERY + query)).body.error.message
    expect(await refused('&filters' + '%5Ba%5D'.repeat(6) + '=1')).toMatch(/^the query is refused: .*depth/)
    expect(await refused('&x=1'.repeat(500))).toMatch(/^the query is refused: Parameter limit exceeded/)
    expect(await refused('&item_ids%5B100%5D=1001')).toMatch(/^the query is refused: Array limit exceeded/)
    // Five levels, as deep as a SPEC body goes, are read.
    expect((await get(demo, '/v3/recommend/items/newest', SHOPPER_QUERY + '&filters' + '%5Ba%5D'.repeat(5) + '=1')).status).toBe(200)
    const polluting = ['&__proto__%5Bpolluted%5D=1', '&user%5B__proto__%5D%5Bpolluted%5D=1', '&constructor%5Bprototype%5D%5Bpolluted%5D=1']
    const answer = await get(demo, '/v3/recommend/items/newest', SHOPPER_QUERY + polluting.join(''))
    expect(answer.status).toBe(200)
    expect(answer.body.meta.user_id).toBe('uid-1')
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    await alive(demo)
  })

  it("a JSONP callback named as the SDK names its own, with a '-' in it, is called through window; any other name gets JSON", async () => {
    const demo = await start()
    const sdkNamed = await fetch(demo.url + '/v3/recommend/items/newest?key=demo-key' + SHOPPER_QUERY + '&callback=__jpa-Z0')
    expect(sdkNamed.headers.get('content-type')).toContain('text/javascript')
    expect(await sdkNamed.text()).toMatch(/^window\["__jpa-Z0"\]\(\{"meta":\{/)
    const hostile = await fetch(demo.url + '/v3/recommend/items/newest?key=demo-key' + SHOPPER_QUERY + '&callback=' + encodeURIComponent('alert(1)//'))
    expect(hostile.headers.get('content-type')).toBe('application/json')
    expect((await hostile.json()).meta.user_id).toBe('uid-1')
  })
})
