// @vitest-environment node
// Dead letters as an attacker fills them, over real HTTP, into the package's fileSink: one
// address posting large refused envelopes, many addresses at once, and a file that must stay
// within its size. Each letter keeps what a second look needs, never the shopper's email.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createRelay, fileSink, toNodeHandler, type DeadLetter, type Relay, type RelayOptions } from '../../src/relay'
import { waitFor } from '../support/wait'
import { envelope, recordingSink, serve } from './support'

const EMAIL = 'shopper@example.com'
const MB = 1024 * 1024

let dir: string
const servers: { close(): Promise<void> }[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close()
  rmSync(dir, { recursive: true, force: true })
})

/** A relay on a port of its own, its dead letters in a fileSink: its URL, the relay and the file. */
async function started(options: Partial<RelayOptions> = {}, maxBytes?: number) {
  dir = mkdtempSync(join(tmpdir(), 'dead-letters-'))
  const file = join(dir, 'refused.ndjson')
  const relay = createRelay({ keys: ['KEY'], sink: recordingSink().sink, deadLetter: fileSink(file, { maxBytes }), ...options })
  const server = await serve(toNodeHandler(relay))
  servers.push(server)
  return { relay, url: server.origin + '/df/events', file }
}

/** A sample's value in a scrape (Prometheus text format), 0 when the series is missing. */
function sample(text: string, name: string, labels = ''): number {
  const line = text.split('\n').find((line) => line.startsWith(name + (labels ? '{' + labels + '}' : '') + ' '))
  return line ? Number(line.split(' ')[1]) : 0
}

/** Waits until every refused envelope the relay counted was written, failed or dropped as a dead letter. */
async function settledLetters(relay: Relay) {
  await waitFor(async () => {
    const text = await relay.metrics()
    const letters = ['delivered', 'failed', 'dropped'].reduce((sum, result) => sum + sample(text, 'df_relay_dead_letters_total', `result="${result}"`), 0)
    return letters == sample(text, 'df_relay_events_total', 'outcome="rejected"')
  }, 'the dead letters to settle')
}

const lettersIn = (file: string): DeadLetter[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line))

const post = async (url: string, body: unknown, headers: Record<string, string> = {}) => {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'text/plain;charset=UTF-8', ...headers }, body: JSON.stringify(body) })
  await response.text()
  return response.status
}

/** A click-item the rules refuse (its item_id a number), of about `bytes`, carrying the shopper's email, ip and agent. */
const refused = (bytes: number, fields = 1) => {
  const padding = Object.fromEntries(Array.from({ length: fields }, (_, index) => ['note' + index, 'x'.repeat(Math.floor(bytes / fields))]))
  return envelope({
    properties: { item_id: 42, variant_item_id: '421', ...padding },
    user: { uid: 'uid-1', sid: 'sid-1', email: EMAIL, ip: '198.51.100.23', ua: 'Mozilla/5.0 (iPhone)' }
  })
}

describe.each([
  ['the default rate limit', {}],
  ['no rate limit', { rateLimit: false as const }]
])('300 requests of one 255 KiB refused envelope from one address, with %s', (name, options) => {
  it('grow the dead letters by at most 5 MB, and no letter holds the email', async () => {
    const { relay, url, file } = await started(options)
    const startedAt = Date.now()
    const statuses: number[] = []
    for (let request = 0; request < 300; request++) statuses.push(await post(url, [refused(255 * 1024)]))
    await settledLetters(relay)
    const size = statSync(file).size
    console.log(`dead letters (${name}): ${(size / MB).toFixed(3)} MB for 300 requests, ${statuses.filter((status) => status == 429).length} answered 429`)
    expect(size).toBeLessThanOrEqual(5 * MB)
    const text = readFileSync(file, 'utf8')
    expect(text).not.toContain(EMAIL)
    const [first] = lettersIn(file)
    expect(first).toMatchObject({
      error: 'click-item: item_id must be a non-empty string, got 42',
      key: 'KEY',
      truncated: true,
      envelope: {
        event: 'click-item',
        user: { uid: 'uid-1', sid: 'sid-1', email: '(removed: text of 19 characters)', ip: '(removed: text of 13 characters)' },
        properties: { item_id: 42, variant_item_id: '421' }
      }
    })
    expect((first.envelope as { properties: Record<string, string> }).properties.note0).toBe('x'.repeat(256) + '…')
    if (name == 'the default rate limit') {
      // A KiB costs a token: the bucket of 2,000 pays for 7 such requests at once.
      expect(statuses.filter((status) => status == 429).length).toBeGreaterThanOrEqual(290)
    } else {
      // No rate limit: the address's own share of dead letters, 64 KiB and 64 characters a second, bounds them.
      expect(size).toBeLessThanOrEqual(64 * 1024 + (64 * (Date.now() - startedAt)) / 1000 + 4096)
    }
  }, 60000)
})

describe('refused envelopes from 200 addresses at once', () => {
  it('leave at most the total share of dead letters, 4 MiB and 4 KiB a second, and the rest are counted as dropped', async () => {
    const { relay, url, file } = await started({ trustProxy: 1, rateLimit: false })
    const startedAt = Date.now()
    // Each address's 40 envelopes are cut to letters of about 2 KiB: more than its own share of 64 KiB.
    for (let address = 0; address < 200; address++) {
      const status = await post(
        url,
        Array.from({ length: 40 }, () => refused(4000, 20)),
        { 'x-forwarded-for': `203.0.${Math.floor(address / 250)}.${address % 250}` }
      )
      expect(status).toBe(400)
    }
    await settledLetters(relay)
    const size = statSync(file).size
    expect(size).toBeLessThanOrEqual(4 * MB + (4096 * (Date.now() - startedAt)) / 1000 + 4096)
    expect(size).toBeGreaterThan(3 * MB)
    expect(sample(await relay.metrics(), 'df_relay_dead_letters_total', 'result="dropped"')).toBeGreaterThan(2000)
  }, 60000)
})

describe('fileSink(path, { maxBytes })', () => {
  it('keeps the dead letters within twice maxBytes, the newest in the file and the ones before in <path>.1', async () => {
    const { relay, url, file } = await started({ trustProxy: 1, rateLimit: false }, 20000)
    for (let request = 0; request < 30; request++) {
      const batch = Array.from({ length: 10 }, (_, index) => envelope({ key: 'NOT_OURS', event_id: `r${request}-${index}` }))
      await post(url, batch, { 'x-forwarded-for': '203.0.113.' + request })
      // One request's letters written before the next: the sink's calls in flight are bounded,
      // and on a busy machine the last ones would otherwise be dropped, not rotated.
      await settledLetters(relay)
    }
    expect(existsSync(file + '.1')).toBe(true)
    expect(statSync(file).size).toBeLessThanOrEqual(20000)
    expect(statSync(file + '.1').size).toBeLessThanOrEqual(20000)
    const newest = lettersIn(file)
    expect(newest.at(-1)).toMatchObject({ error: 'The API key is not valid.', key: 'NOT_OURS', envelope: { event_id: 'r29-9' } })
    // The two files hold the last letters written, none cut in two.
    const kept = [...lettersIn(file + '.1'), ...newest].map((letter) => (letter.envelope as { event_id: string }).event_id)
    expect(kept.at(-1)).toBe('r29-9')
    expect(kept.length).toBeGreaterThan(40)
  })
})
