import { pack } from '../shared/batch'
import { createBackoff, outcomeOf } from '../shared/http'
import type { RelayEvent, Sink } from './types'

/**
 * A sink's failure that says when to try again, which the relay passes on as Retry-After, and
 * which of the events did reach their destination before it failed: the relay marks those as
 * delivered, so that the sender's resend does not bring them a second time.
 */
export class SinkUnavailable extends Error {
  constructor(
    message: string,
    /** Milliseconds until the sink may take events again. */
    readonly retryAfterMs: number,
    /** Events of the failed call that were delivered all the same. */
    readonly delivered: RelayEvent[] = []
  ) {
    super(message)
    this.name = 'SinkUnavailable'
  }
}

// The part of Node's file module the file sink uses: the package needs no @types/node.
type FileHandle = { appendFile(data: string): Promise<void> }
type FileModule = { open(path: string, flags: string): Promise<FileHandle> }

/**
 * Appends each accepted event as one line of an NDJSON file, resolving once the lines are
 * written. Writes go one after another through one file handle, so that lines of two batches
 * never interleave. Node only: the file module is loaded on first use, so the relay's entry
 * still loads on platforms without it.
 */
export function fileSink(path: string): Sink {
  let handle: Promise<FileHandle> | undefined
  let turn: Promise<unknown> = Promise.resolve()
  return (events) => {
    const write = turn.then(async () => {
      // A specifier in a variable: bundlers for platforms without files leave it alone.
      const module = 'node:fs/promises'
      handle ||= (import(module) as Promise<FileModule>).then((fs) => fs.open(path, 'a'))
      await (await handle).appendFile(events.map((event) => JSON.stringify(event) + '\n').join(''))
    })
    turn = write.catch(() => {})
    return write
  }
}

export interface ForwardSinkOptions {
  /** The service's event route. SPEC does not show it; the service's documentation does. */
  url: string
  /** The key the service takes, if it is not the one each event carries. */
  key?: string
  /** More headers for the service, e.g. an authorization. */
  headers?: Record<string, string>
  /** Requests in flight at once, as the server sender's `maxInFlight`. Default 4. */
  maxInFlight?: number
  /** Milliseconds a request may go unanswered, and events may wait for a free request. Default 10,000. */
  timeout?: number
}

// A forwarded body holds at most this much, as the server sender's.
const BODY_BYTES = 61440

/** SPEC's envelope of an accepted event: the relay's times taken out, the clock's error corrected. */
const forService = ({ received_at, t_corrected, ...event }: RelayEvent, key: string | undefined) => ({ ...event, key: key || event.key, t_client: t_corrected })

/**
 * Forwards accepted events to the service, batched: what arrives while requests are in flight
 * goes together, at most `maxInFlight` requests at once, with the HTTP policy of both senders
 * (shared/http.ts): after a failure one request at a time, and every caller told to come back
 * after the backoff. A call resolves once the request that carried its events was answered
 * 2xx; it rejects when that failed, or at once while the service is backed off, so the relay
 * answers 503 and the browser keeps the events.
 */
export function forwardSink({ url, key, headers = {}, maxInFlight = 4, timeout = 10000 }: ForwardSinkOptions): Sink {
  const backoff = createBackoff({ probeFirst: true })
  type Waiting = { event: RelayEvent; settle: (error?: Error) => void }
  let waiting: Waiting[] = []
  let inFlight = 0

  const unavailable = () => new SinkUnavailable('the service is backed off after a failure', Math.max(0, backoff.resumeAt() - Date.now()))

  async function send(batch: Waiting[], body: string) {
    inFlight++
    const step = backoff.step()
    let status = 0
    let retryAfter: string | null = null
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
        signal: AbortSignal.timeout(timeout)
      })
      await response.arrayBuffer().catch(() => {})
      status = response.status
      retryAfter = response.headers.get('retry-after')
    } catch {
      // No answer in time: a failure like a 503.
    }
    inFlight--
    const outcome = outcomeOf(status)
    if (outcome == 'retry') backoff.failed(step, retryAfter)
    else backoff.answered()
    const failure = outcome == 'delivered' ? undefined : outcome == 'retry' ? unavailable() : new Error('the service refused the batch: ' + status)
    batch.forEach(({ settle }) => settle(failure))
    pump()
  }

  function pump() {
    while (waiting.length && inFlight < backoff.slots(maxInFlight)) {
      if (Date.now() < backoff.resumeAt()) {
        // Backed off: every waiting call is told at once, and its events stay with the browser.
        const failure = unavailable()
        waiting.splice(0).forEach(({ settle }) => settle(failure))
        return
      }
      // One body, as large as 60 KiB allows: what waited for a slot goes together.
      const gone = new Set<Waiting>()
      const packed = waiting.map((source) => ({ event: forService(source.event, key), source }))
      const tooLarge = ({ source }: (typeof packed)[number]) => {
        gone.add(source)
        source.settle(new Error('an event is too large to forward'))
      }
      const [body] = pack(packed, BODY_BYTES, tooLarge, 1)
      const batch = body ? body.entries.map(({ source }) => source) : []
      batch.forEach((source) => gone.add(source))
      waiting = waiting.filter((source) => !gone.has(source))
      if (body) send(batch, body.body)
    }
  }

  return (events) => {
    if (!events.length) return Promise.resolve()
    if (Date.now() < backoff.resumeAt()) return Promise.reject(unavailable())
    // One promise for the call, settled once every one of its events is: resolved when all were
    // answered 2xx; otherwise rejected with the first failure, naming the events that did get
    // through (a call's events may go in several requests).
    return new Promise<void>((resolve, reject) => {
      let left = events.length
      let failure: Error | undefined
      const delivered: RelayEvent[] = []
      // Events that waited `timeout` for a free request are given up, so that a call never
      // lasts longer than two timeouts: the relay's claims (claimMs) must outlast it.
      const expiry = setTimeout(() => {
        const expired = waiting.filter((entry) => mine.has(entry))
        waiting = waiting.filter((entry) => !mine.has(entry))
        expired.forEach(({ settle }) => settle(new SinkUnavailable('no request was free for ' + timeout + ' ms', 1000)))
      }, timeout)
      const mine = new Set<Waiting>()
      for (const event of events) {
        const settle = (error?: Error) => {
          if (error) failure ||= error
          else delivered.push(event)
          if (--left) return
          clearTimeout(expiry)
          if (!failure) resolve()
          else if (failure instanceof SinkUnavailable || delivered.length) {
            reject(new SinkUnavailable(failure.message, failure instanceof SinkUnavailable ? failure.retryAfterMs : 0, delivered))
          } else reject(failure)
        }
        const entry = { event, settle }
        mine.add(entry)
        waiting.push(entry)
      }
      pump()
    })
  }
}
