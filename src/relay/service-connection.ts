import { errorMessageOf } from '../shared/http'

/** What the service answered: status 0 when nothing came within the timeout; the message of SPEC's error shape ("Errors"), if any. */
export interface ServiceAnswer {
  status: number
  retryAfter: string | null
  message: string
}

/** Posts one body with its headers to the service. */
export type ServicePost = (body: string, headers: Record<string, string>) => Promise<ServiceAnswer>

// The part of undici (Node's own HTTP client, as a package) the sink uses: the package needs no
// types of it, and platforms without it load the relay all the same.
type UndiciResponse = { statusCode: number; headers: Record<string, string | string[] | undefined>; body: { text(): Promise<string>; dump(): Promise<void> } }
type UndiciPool = { request(options: Record<string, unknown>): Promise<UndiciResponse> }
type Socket = { cork(): void; uncork(): void; once(event: 'close', listener: () => void): void }
type Connect = (options: object, callback: (error: Error | null, socket: Socket | null) => void) => void
type UndiciModule = {
  Pool: new (origin: string, options: Record<string, unknown>) => UndiciPool
  buildConnector(options: Record<string, unknown>): Connect
}
type EventsModule = { setMaxListeners(count: number, target: AbortSignal): void }

// Connections to the service. Each carries its share of the requests in flight one after
// another without waiting for answers (HTTP/1.1 pipelining, RFC 9112 §9.3.2), or as streams of
// one session where the service offers HTTP/2 (ALPN, RFC 7301): one write to the socket serves
// several events, where a connection per request in flight costs a write and a read each.
const CONNECTIONS = 4

const NO_ANSWER: ServiceAnswer = { status: 0, retryAfter: null, message: '' }

/**
 * The poster of forwardSink: with undici where the platform has it (Node), a pool of
 * `CONNECTIONS` connections to the service's origin with up to `inFlight` requests on them at
 * once; elsewhere (a platform with fetch alone) fetch, as the platform pools it. `timeout`: how
 * long a request may go unanswered.
 */
export function serviceConnection(url: string, inFlight: number, timeout: number): ServicePost {
  const target = new URL(url)
  const path = target.pathname + target.search
  let pool: Promise<UndiciPool | undefined> | undefined
  const turn = turns(timeout)
  const open = async () => {
    // Specifiers in variables: bundlers for platforms without sockets leave them alone.
    const names = ['undici', 'node:events']
    const [undici, events] = (await Promise.all(names.map((name) => import(name).catch(() => undefined)))) as [UndiciModule?, EventsModule?]
    if (!undici?.Pool || !events) return
    turn.listeners((signal) => events.setMaxListeners(0, signal))
    const connect = undici.buildConnector({ allowH2: true, timeout })
    return new undici.Pool(target.origin, {
      connections: CONNECTIONS,
      pipelining: Math.max(1, Math.ceil(inFlight / CONNECTIONS)),
      allowH2: true,
      headersTimeout: timeout,
      bodyTimeout: timeout,
      connect: turn.connector(connect)
    })
  }
  return async (body, headers) => {
    const pooled = await (pool ||= open())
    if (!pooled) return postByFetch(url, body, headers, timeout)
    try {
      const response = await pooled.request({
        path,
        method: 'POST',
        headers,
        body,
        // POSTs go one after another on a connection, answers in order. An event the service
        // took whose answer a dropped connection lost is sent again: the same risk as a resend
        // by the browser after a lost answer (docs/guide/relay.md "What each failure costs").
        idempotent: true,
        blocking: false,
        signal: turn.signal()
      })
      const ok = response.statusCode >= 200 && response.statusCode < 300
      const text = ok ? '' : await response.body.text().catch(() => '')
      if (ok) await response.body.dump().catch(() => {})
      const retryAfter = response.headers['retry-after']
      return { status: response.statusCode, retryAfter: typeof retryAfter == 'string' ? retryAfter : null, message: ok ? '' : errorMessageOf(text) || '' }
    } catch {
      // No answer in time, or the connection failed: a failure like a 503.
      return NO_ANSWER
    }
  }
}

async function postByFetch(url: string, body: string, headers: Record<string, string>, timeout: number): Promise<ServiceAnswer> {
  try {
    const response = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(timeout) })
    const text = await response.text().catch(() => '')
    return { status: response.status, retryAfter: response.headers.get('retry-after'), message: response.ok ? '' : errorMessageOf(text) || '' }
  } catch {
    return NO_ANSWER
  }
}

/**
 * What the requests started in one task share: their sockets, corked from the first request's
 * start until the end of the task, so that the requests one burst of answers frees leave in one
 * write per connection rather than one write each (Node's `socket.cork()`); and their deadline,
 * one timer for all of them (`timeout` after the task).
 */
function turns(timeout: number) {
  const sockets = new Set<Socket>()
  let signal: AbortSignal | undefined
  let allowListeners: (signal: AbortSignal) => void = () => {}
  const end = () => {
    signal = undefined
    sockets.forEach((socket) => socket.uncork())
  }
  return {
    /** `connect`, its sockets kept while open. */
    connector:
      (connect: Connect): Connect =>
      (options, callback) =>
        connect(options, (error, socket) => {
          if (socket) {
            sockets.add(socket)
            socket.once('close', () => sockets.delete(socket))
          }
          callback(error, socket)
        }),
    /** Each request of a task listens to its signal: Node's warning of more than 10 listeners is no leak here. */
    listeners(allow: (signal: AbortSignal) => void) {
      allowListeners = allow
    },
    /** The task's signal, aborted `timeout` after it; the sockets corked until the task ends. */
    signal(): AbortSignal {
      if (signal) return signal
      signal = AbortSignal.timeout(timeout)
      allowListeners(signal)
      sockets.forEach((socket) => socket.cork())
      setImmediate(end)
      return signal
    }
  }
}
