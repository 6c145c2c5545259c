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
// types of it, and platforms without it load the relay all the same. Its `dispatch` is the layer
// under `request`: an answer is read by callbacks, with no stream or promise made for it.
type Controller = { abort(reason: Error): void }
type Handler = {
  onRequestStart(controller: Controller): void
  onResponseStart(controller: Controller, status: number, headers: Record<string, string | string[] | undefined>): void
  onResponseData(controller: Controller, chunk: Uint8Array): void
  onResponseEnd(): void
  onResponseError(controller: Controller, error: Error): void
}
type UndiciPool = { dispatch(options: Record<string, unknown>, handler: Handler): boolean }
type Socket = { cork(): void; uncork(): void; once(event: 'close', listener: () => void): void }
type Connect = (options: object, callback: (error: Error | null, socket: Socket | null) => void) => void
type UndiciModule = {
  Pool: new (origin: string, options: Record<string, unknown>) => UndiciPool
  buildConnector(options: Record<string, unknown>): Connect
}

// Connections to the service. Each carries its share of the requests in flight one after
// another without waiting for answers (HTTP/1.1 pipelining, RFC 9112 §9.3.2), or as streams of
// one session where the service offers HTTP/2 (ALPN, RFC 7301): one write to the socket serves
// several events, where a connection per request in flight costs a write and a read each.
const CONNECTIONS = 4

const NO_ANSWER: ServiceAnswer = { status: 0, retryAfter: null, message: '' }

/**
 * The poster of forwardSink: with undici where the platform has it (Node), a pool of
 * `CONNECTIONS` connections to the service's origin with up to `concurrentRequests` requests on them at
 * once; elsewhere (a platform with fetch alone) fetch, as the platform pools it. `timeout`: how
 * long a request may go unanswered.
 */
export function serviceConnection(url: string, concurrentRequests: number, timeout: number): ServicePost {
  const target = new URL(url)
  const path = target.pathname + target.search
  const turn = turns(timeout)
  const open = async () => {
    // A specifier in a variable: bundlers for platforms without sockets leave it alone.
    const name = 'undici'
    const undici = (await import(name).catch(() => undefined)) as UndiciModule | undefined
    if (!undici?.Pool) return
    const connect = undici.buildConnector({ allowH2: true, timeout })
    return new undici.Pool(target.origin, {
      connections: CONNECTIONS,
      pipelining: Math.max(1, Math.ceil(concurrentRequests / CONNECTIONS)),
      allowH2: true,
      headersTimeout: timeout,
      bodyTimeout: timeout,
      connect: turn.connector(connect)
    })
  }
  // Loaded as the sink is made (a few hundred milliseconds of compiling), not on its first event.
  const pool = open()
  return async (body, headers) => {
    const pooled = await pool
    if (!pooled) return postByFetch(url, body, headers, timeout)
    return new Promise((resolve) => {
      let status = 0
      let retryAfter: string | null = null
      let text = ''
      const decoder = new TextDecoder()
      const call = turn.started()
      pooled.dispatch(
        // POSTs go one after another on a connection, answers in order. An event the service
        // took whose answer a dropped connection lost is sent again: the same risk as a resend
        // by the browser after a lost answer (docs/guide/relay.md "What each failure costs").
        { path, method: 'POST', headers, body, idempotent: true, blocking: false },
        {
          onRequestStart: call.controlledBy,
          onResponseStart(_, answered, answerHeaders) {
            status = answered
            const header = answerHeaders['retry-after']
            retryAfter = typeof header == 'string' ? header : null
          },
          // Only a refusal's body is read, for the service's words.
          onResponseData(_, chunk) {
            if (status < 200 || status >= 300) text += decoder.decode(chunk, { stream: true })
          },
          onResponseEnd() {
            call.ended()
            const ok = status >= 200 && status < 300
            resolve({ status, retryAfter, message: ok ? '' : errorMessageOf(text) || '' })
          },
          // No answer in time, or the connection failed: a failure like a 503.
          onResponseError() {
            call.ended()
            resolve(NO_ANSWER)
          }
        }
      )
    })
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
 * one timer for all of them, `timeout` after the task, which aborts those still unanswered.
 */
function turns(timeout: number) {
  const sockets = new Set<Socket>()
  type Call = { abort(): void }
  let current: { calls: Set<Call>; timer: ReturnType<typeof setTimeout> } | undefined
  const end = () => {
    // The deadline is no longer needed once every call of the task was answered.
    if (current && !current.calls.size) clearTimeout(current.timer)
    current = undefined
    sockets.forEach((socket) => socket.uncork())
  }
  const expired = new Error('the service did not answer in time')
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
    /** A request starts: aborted if unanswered `timeout` after its task; the sockets corked until the task ends. */
    started() {
      if (!current) {
        const calls = new Set<Call>()
        current = { calls, timer: setTimeout(() => calls.forEach((call) => call.abort()), timeout) }
        sockets.forEach((socket) => socket.cork())
        setImmediate(end)
      }
      const turn = current
      let controller: Controller | undefined
      let late = false
      const call = {
        abort() {
          late = true
          controller?.abort(expired)
        },
        /** undici's handle on the request, each time it is sent (again, after the head of its pipeline failed). */
        controlledBy(given: Controller) {
          controller = given
          if (late) given.abort(expired)
        },
        ended() {
          turn.calls.delete(call)
          if (!turn.calls.size && turn != current) clearTimeout(turn.timer)
        }
      }
      turn.calls.add(call)
      return call
    }
  }
}
