// @vitest-environment node
// forwardSink against a service that speaks HTTP/2 only, over TLS, as a hosted service's front
// may: the sink (dist/relay.mjs, in a process of its own that trusts the test's certificate by
// NODE_EXTRA_CA_CERTS) offers h2 by ALPN and sends its events as streams of a few sessions.
import { execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createSecureServer, type Http2SecureServer } from 'node:http2'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, it } from 'vitest'

let dir: string
let server: Http2SecureServer
const bodies: { event: string; key: string }[] = []
let sessions = 0
let open = 0
let mostOpen = 0

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'forward-h2-'))
  // A certificate for 127.0.0.1, made for this run.
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem')
    ],
    { stdio: 'ignore' }
  )
  server = createSecureServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')), allowHTTP1: false })
  server.on('session', () => sessions++)
  server.on('stream', (stream, headers) => {
    open++
    mostOpen = Math.max(mostOpen, open)
    let text = ''
    stream.on('data', (chunk) => (text += chunk))
    stream.on('end', () => {
      const body = JSON.parse(text)
      const fine = headers['content-type'] == 'application/json' && headers['x-key'] == body.key
      if (fine) bodies.push(body)
      // A service's own time per event, so that requests overlap.
      setTimeout(() => {
        open--
        stream.respond({ ':status': fine ? 200 : 400, 'content-type': 'application/json' })
        stream.end('{}')
      }, 20)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
})
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve))
  rmSync(dir, { recursive: true, force: true })
})

// The sink's process: one event, then 200 in one call, and what each call was told, on stdout.
const SCRIPT = `
import { forwardSink } from ${JSON.stringify(fileURLToPath(new URL('../../dist/relay.mjs', import.meta.url)))}
const event = (index) => ({ event: 'view-page', properties: { url: 'https://shop.test/' + index, ref: '', width: 1, height: 1 }, key: 'KEY',
  t_client: 1767261600000, t_corrected: 1767261600000, received_at: 1767261600000, user: { uid: 'u', sid: 's' }, event_id: 'e' + index })
const sink = forwardSink({ url: process.env.SERVICE })
const told = (call) => call.then(() => 'ok', (error) => error.message)
// The first request goes alone (the sink probes a service it knows nothing of), then 200 at once.
const first = await told(sink([event(-1)]))
const rest = await told(sink(Array.from({ length: 200 }, (_, index) => event(index))))
console.log(JSON.stringify({ first, rest }))
process.exit(0)
`

it('a service that speaks HTTP/2 only gets every event, as streams of at most 4 sessions, many at once', async () => {
  const { port } = server.address() as AddressInfo
  const child = spawn(process.execPath, ['--input-type=module', '-e', SCRIPT], {
    env: { ...process.env, SERVICE: `https://127.0.0.1:${port}/v3/feedback`, NODE_EXTRA_CA_CERTS: join(dir, 'cert.pem') },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  let output = ''
  child.stdout.on('data', (chunk) => (output += chunk))
  await new Promise((resolve) => child.once('exit', resolve))
  expect(JSON.parse(output)).toEqual({ first: 'ok', rest: 'ok' })
  expect(bodies).toHaveLength(201)
  expect(new Set(bodies.map((body) => (body as unknown as { properties: { url: string } }).properties.url)).size).toBe(201)
  expect(sessions).toBeLessThanOrEqual(4)
  // Multiplexed: far more requests at once than sessions.
  expect(mostOpen).toBeGreaterThan(16)
}, 30000)
