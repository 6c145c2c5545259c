// Helpers shared by the relay's tests: envelopes, a sink that records, a relay's answer read
// whole, and node:http servers started on a free loopback port and stopped for good.
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { RelayEvent } from '../../src/relay'

let counter = 0

/** A valid click-item envelope with a fresh event id; `overrides` replace whole fields. */
export const envelope = (overrides: Record<string, unknown> = {}) => ({
  event: 'click-item',
  properties: { rid: 's-1', item_id: '42', variant_item_id: '421' },
  key: 'KEY',
  t_client: 1767261600000,
  user: { uid: 'uid-1', sid: 'sid-1', lang: ['en'] },
  event_id: 'evt-' + ++counter + '-' + Math.random().toString(36).slice(2, 8),
  ...overrides
})

/** A sink that keeps what it was handed, one entry per call, and can be told to fail. */
export function recordingSink() {
  const calls: RelayEvent[][] = []
  let fail: (() => Error | undefined) | undefined
  let hold: Promise<void> | undefined
  const sink = async (events: RelayEvent[]) => {
    await hold
    const error = fail?.()
    if (error) throw error
    calls.push(events.map((event) => structuredClone(event)))
  }
  return {
    sink,
    calls,
    events: () => calls.flat(),
    /** How many times each event id reached the sink. */
    counts: () => {
      const counts = new Map<string, number>()
      for (const event of calls.flat()) counts.set(event.event_id!, (counts.get(event.event_id!) || 0) + 1)
      return counts
    },
    failWith: (decide: (() => Error | undefined) | undefined) => {
      fail = decide
    },
    /** Makes every call wait for `gate` before it stores. */
    holdUntil: (gate: Promise<void> | undefined) => {
      hold = gate
    }
  }
}

/** A promise and the function that resolves it. */
export function gate() {
  let open!: () => void
  const promise = new Promise<void>((resolve) => {
    open = resolve
  })
  return { promise, open }
}

/** Status, headers and the JSON body (or the text when it is none) of an answer. */
export async function read(response: Response) {
  const text = await response.text()
  let body: any
  try {
    body = JSON.parse(text)
  } catch {
    body = text
  }
  return { status: response.status, headers: response.headers, body }
}

/** Starts a node:http server on a free loopback port. */
export async function serve(handler: RequestListener | ((request: IncomingMessage, response: ServerResponse) => unknown)) {
  const server: Server = createServer(handler as RequestListener)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    server,
    port,
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/** The events of a request body, parsed. */
export async function bodyOf(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}
