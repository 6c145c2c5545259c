// @vitest-environment node
// The relay run as a service, over real HTTP: the metrics an operator scrapes (two instances
// sharing a real redis-server, and a forwarded service that stops answering), the dead-letter
// sink, and the bot rule.
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRelay, fileSink, forwardSink, redisStore, toNodeHandler, type BatchReport, type DeadLetter, type RelayOptions } from '../../src/relay'
import { connectClient, startRedis, type RedisServer } from './redis-server'
import { envelope, recordingSink, serve } from './support'

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36'
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0'
const SAFARI = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15'
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'
const BINGBOT = 'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)'
const HEADLESS = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36'
const SECRET = 'the-shops-server-secret-0123456789'

const servers: { close(): Promise<void> }[] = []
afterAll(async () => {
  for (const server of servers) await server.close()
})

/** A relay on a port of its own: its URL and the relay, for its metrics. */
async function started(options: RelayOptions) {
  const relay = createRelay(options)
  const server = await serve(toNodeHandler(relay))
  servers.push(server)
  return { relay, url: server.origin + '/df/events' }
}

const post = async (url: string, body: unknown, ua = CHROME, headers: Record<string, string> = {}) => {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'text/plain;charset=UTF-8', 'user-agent': ua, ...headers },
    body: JSON.stringify(body)
  })
  return { status: response.status, body: await response.json() }
}

/** A sample's value in a scrape (Prometheus text format), 0 when the series is missing. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([label, value]) => `${label}="${value}"`)
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+)(?:\{([^}]*)\})? (\S+)$/.exec(line)
    if (!match || match[1] != name) continue
    const given = match[2] ? match[2].split(',') : []
    if (wanted.length == given.length && wanted.every((label) => given.includes(label))) return Number(match[3])
  }
  return 0
}

const outcomes = (text: string) =>
  Object.fromEntries(['accepted', 'duplicate', 'rejected', 'bot'].map((outcome) => [outcome, sample(text, 'df_relay_events_total', { outcome })]))

describe('metrics of two instances sharing Redis', () => {
  let redis: RedisServer
  let client: Awaited<ReturnType<typeof connectClient>>
  beforeAll(async () => {
    redis = await startRedis()
    client = await connectClient(redis)
  })
  afterAll(async () => {
    await client?.destroy()
    await redis?.close()
  })

  it('count what was posted: each its own, and summed what the sink got, the duplicates, the refused and the bots', async () => {
    const recorded = recordingSink()
    const options = () => ({ keys: ['KEY'], sink: recorded.sink, store: redisStore(client, { prefix: 'metrics:' }) })
    const [a, b] = [await started(options()), await started(options())]
    const first = [envelope(), envelope(), envelope(), envelope(), envelope()]
    const more = [envelope(), envelope(), envelope()]
    // 5 taken, 2 refused (no properties, a key not ours).
    expect((await post(a.url, [...first, envelope({ properties: undefined }), envelope({ key: 'OTHER' })])).status).toBe(200)
    // The same 5 again at the other instance: duplicates; and 3 new.
    expect((await post(b.url, [...first, ...more])).body).toMatchObject({ accepted: 3, duplicates: 5 })
    // A crawler's 4: answered as taken, stored nowhere.
    expect((await post(a.url, [envelope(), envelope(), envelope(), envelope()], GOOGLEBOT)).body).toMatchObject({ accepted: 4 })
    // 2 without a key: 401.
    expect((await post(b.url, [envelope({ key: '' }), envelope({ key: '' })])).status).toBe(401)

    const [textA, textB] = [await a.relay.metrics(), await b.relay.metrics()]
    expect(outcomes(textA)).toEqual({ accepted: 5, duplicate: 0, rejected: 2, bot: 4 })
    expect(outcomes(textB)).toEqual({ accepted: 3, duplicate: 5, rejected: 2, bot: 0 })
    expect(recorded.events()).toHaveLength(5 + 3)
    expect(sample(textA, 'df_relay_requests_total', { status: '200' })).toBe(2)
    expect(sample(textB, 'df_relay_requests_total', { status: '200' })).toBe(1)
    expect(sample(textB, 'df_relay_requests_total', { status: '401' })).toBe(1)
    // A's two requests called its sink once (the bots' none), and Redis on each.
    expect(sample(textA, 'df_relay_sink_duration_seconds_count', { result: 'delivered' })).toBe(1)
    expect(sample(textA, 'df_relay_store_duration_seconds_count', { operation: 'claim' })).toBe(2)
    expect(sample(textB, 'df_relay_store_duration_seconds_count', { operation: 'claim' })).toBe(2)
  })
})

describe('a scrape while the forwarded service is down', () => {
  it('shows the events waiting in the sink, then the 503s given', async () => {
    // A service that takes requests and never answers them.
    const held: unknown[] = []
    const service = await serve((request) => void held.push(request))
    servers.push(service)
    const { relay, url } = await started({ keys: ['KEY'], sink: forwardSink({ url: service.origin, format: 'batch', timeout: 1000 }) })
    const batches = [0, 1].map(() => Array.from({ length: 10 }, () => envelope()))
    const answers = batches.map((batch) => post(url, batch))
    await expect.poll(() => held.length).toBe(1)
    const during = await relay.metrics()
    expect(sample(during, 'df_relay_sink_waiting_events')).toBe(20)
    expect((await Promise.all(answers)).map((answer) => answer.status)).toEqual([503, 503])
    // Backed off now: answered 503 at once.
    expect((await post(url, [envelope()])).status).toBe(503)
    const after = await relay.metrics()
    expect(sample(after, 'df_relay_requests_total', { status: '503' })).toBe(3)
    expect(sample(after, 'df_relay_unavailable_total', { reason: 'sink' })).toBe(3)
    expect(sample(after, 'df_relay_sink_duration_seconds_count', { result: 'failed' })).toBe(3)
    expect(sample(after, 'df_relay_sink_waiting_events')).toBe(0)
    expect(outcomes(after)).toEqual({ accepted: 0, duplicate: 0, rejected: 0, bot: 0 })
  })
})

describe('the dead-letter sink', () => {
  it('gets each refused envelope once, with its error, its key and when it came; not while the batch is answered 503', async () => {
    const letters: DeadLetter[] = []
    const recorded = recordingSink()
    const { relay, url } = await started({ keys: ['KEY'], sink: recorded.sink, deadLetter: async (given) => void letters.push(...given) })
    const before = Date.now()
    const noProperties = envelope({ properties: undefined })
    const noKey = envelope({ key: undefined })
    expect((await post(url, [envelope(), noProperties, noKey])).status).toBe(200)
    // The sink down: the batch comes again, and its refused envelope is refused then.
    recorded.failWith(() => new Error('down'))
    const again = envelope({ t_client: 'yesterday' })
    expect((await post(url + '?key=KEY', [envelope(), again])).status).toBe(503)
    recorded.failWith(undefined)
    expect((await post(url + '?key=KEY', [envelope(), again])).status).toBe(200)
    await expect.poll(() => letters.length).toBe(3)
    // The envelopes as they came, through JSON.
    const sent = (given: object) => JSON.parse(JSON.stringify(given))
    expect(letters.map(({ error, key, envelope }) => ({ error, key, envelope }))).toEqual([
      { error: 'click-item: properties must be an object, got undefined', key: 'KEY', envelope: sent(noProperties) },
      { error: 'An API key must be provided.', key: '', envelope: sent(noKey) },
      { error: 'click-item: t_client must be a number of milliseconds', key: 'KEY', envelope: sent(again) }
    ])
    for (const letter of letters) expect(letter.refused_at).toBeGreaterThanOrEqual(before)
    expect(sample(await relay.metrics(), 'df_relay_dead_letters_total', { result: 'delivered' })).toBe(3)
  })

  it('fileSink(path) writes them as NDJSON', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'dead-letters-')), 'refused.ndjson')
    const { url } = await started({ keys: ['KEY'], sink: recordingSink().sink, deadLetter: fileSink(file) })
    await post(url, [envelope({ key: 'NOT_OURS' })])
    await expect.poll(() => readFileSync(file, 'utf8').split('\n').filter(Boolean).length).toBe(1)
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ error: 'The API key is not valid.', key: 'NOT_OURS', envelope: { key: 'NOT_OURS' } })
  })

  it('that throws, fails or hangs changes nothing of the answer, and what it cannot take is dropped and counted', async () => {
    const errors: Error[] = []
    const plain = await started({ keys: ['KEY'], sink: recordingSink().sink })
    const sinks: Record<string, RelayOptions['deadLetter']> = {
      throws: () => {
        throw new Error('thrown')
      },
      fails: async () => Promise.reject(new Error('failed')),
      hangs: () => new Promise<void>(() => {})
    }
    const batch = () => [envelope({ event_id: 'same' }), envelope({ properties: { item_id: 42 } }), envelope({ key: 'OTHER' })]
    const expected = await post(plain.url, batch())
    for (const [name, deadLetter] of Object.entries(sinks)) {
      const { relay, url } = await started({ keys: ['KEY'], sink: recordingSink().sink, deadLetter, onError: (error) => errors.push(error) })
      for (let request = 0; request < 20; request++) {
        const startedAt = performance.now()
        // The first request stores its event, the others find it a duplicate, as at the relay without.
        expect(await post(url, batch()), name).toEqual(request ? { ...expected, body: { ...expected.body, accepted: 0, duplicates: 1 } } : expected)
        expect(performance.now() - startedAt).toBeLessThan(1000)
      }
      const text = await relay.metrics()
      if (name == 'hangs') {
        // 16 calls in flight at most: the 4 requests beyond had their 2 refused envelopes dropped.
        expect(sample(text, 'df_relay_dead_letters_total', { result: 'dropped' })).toBe(8)
      } else expect(sample(text, 'df_relay_dead_letters_total', { result: 'failed' })).toBe(40)
    }
    // The dead-letter sink's failures, each one; and of the refusals, one notice a relay: the first at once, the rest within the minute.
    expect(errors.filter((error) => error.name != 'DropNotice').map((error) => error.message)).toEqual([
      ...Array(20).fill('thrown'),
      ...Array(20).fill('failed')
    ])
    expect(errors.filter((error) => error.name == 'DropNotice').map((error) => error.message)).toEqual(
      Array(3).fill('discovery-feedback: relay: refused 2 envelopes by the rules or the keys, such as: click-item: item_id must be a non-empty string, got 42')
    )
  })
})

describe('bots', () => {
  async function relayFor(bots: 'drop' | 'keep' | undefined) {
    const recorded = recordingSink()
    const reports: BatchReport[] = []
    const options: RelayOptions = { keys: ['KEY'], sink: recorded.sink, serverSecrets: [SECRET], onBatch: (report) => reports.push(report) }
    const { relay, url } = await started(bots ? { ...options, bots } : options)
    return { relay, url, recorded, reports }
  }

  it("drops Googlebot's, bingbot's and HeadlessChrome's events by default, answered as taken and counted; keeps Chrome's, Firefox's and Safari's", async () => {
    const { relay, url, recorded, reports } = await relayFor(undefined)
    for (const ua of [GOOGLEBOT, BINGBOT, HEADLESS])
      expect(await post(url, [envelope(), envelope()], ua)).toEqual({ status: 200, body: { accepted: 2, duplicates: 0, rejected: [] } })
    expect(recorded.events()).toEqual([])
    expect(reports.map((report) => report.bots.map((event) => event.user.ua))).toEqual([GOOGLEBOT, BINGBOT, HEADLESS].map((ua) => [ua, ua]))
    for (const ua of [CHROME, FIREFOX, SAFARI]) expect((await post(url, [envelope()], ua)).body.accepted).toBe(1)
    expect(recorded.events().map((event) => [event.user.ua, event.bot])).toEqual([CHROME, FIREFOX, SAFARI].map((ua) => [ua, undefined]))
    expect(outcomes(await relay.metrics())).toEqual({ accepted: 3, duplicate: 0, rejected: 0, bot: 6 })
  })

  it("keeps them with 'keep', marked bot", async () => {
    const { relay, url, recorded } = await relayFor('keep')
    for (const ua of [GOOGLEBOT, BINGBOT, HEADLESS, CHROME]) await post(url, [envelope()], ua)
    expect(recorded.events().map((event) => [event.user.ua, event.bot])).toEqual([
      [GOOGLEBOT, true],
      [BINGBOT, true],
      [HEADLESS, true],
      [CHROME, undefined]
    ])
    expect(outcomes(await relay.metrics())).toEqual({ accepted: 1, duplicate: 0, rejected: 0, bot: 3 })
  })

  it("judges the server sender's events by the shopper's agent it gives with its secret, a page's by its own request's", async () => {
    const { url, recorded } = await relayFor(undefined)
    const user = (ua: string) => ({ uid: 'u', sid: 's', ip: '198.51.100.7', ua })
    const bearer = { authorization: 'Bearer ' + SECRET }
    // Node's fetch says `node`, a bot's agent: the shopper's given with the secret is what counts.
    await post(url, [envelope({ user: user(SAFARI) }), envelope({ user: user(GOOGLEBOT) })], 'node', bearer)
    // A page may not give one: a crawler's page that says it is Safari is judged by its request.
    await post(url, [envelope({ user: user(SAFARI) })], GOOGLEBOT)
    expect(recorded.events().map((event) => event.user.ua)).toEqual([SAFARI])
  })
})
