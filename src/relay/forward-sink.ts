import { createEngine } from '../shared/engine'
import { createMemoryStore } from '../shared/memory-store'
import { batchRequests, postToService, specRequests, type Outgoing, type Waiting } from './forward-requests'
import { SinkUnavailable } from './sink-unavailable'
import type { DeadLetter, RelayEvent, Sink } from './types'

/** The options of `forwardSink()`. */
export interface ForwardSinkOptions {
  /** The service's event route. SPEC does not show it; the service's documentation does. */
  url: string
  /**
   * What each request carries. `'spec'` (default): one event, as SPEC's "Generic event structure"
   * has it (`event`, `properties`, `key`, `t_client`, `user` and nothing else), a JSON body with
   * `Content-Type: application/json` and the key again in `X-Key` (SPEC "General rules" 2,
   * "Authentication" 2 and 4): what the service takes. `'batch'`: a JSON array of up to 60 KiB of
   * envelopes that keep their `event_id`, for a collector that speaks this package's protocol,
   * such as another relay.
   */
  format?: 'spec' | 'batch'
  /** The key the service takes, if it is not the one each event carries. */
  key?: string
  /** More headers for the service, e.g. an authorization. In `'spec'` format Content-Type and X-Key are the sink's own. */
  headers?: Record<string, string>
  /**
   * Requests in flight at once, over keep-alive connections. Default 16 in `'spec'` format, where
   * each event is a request of its own, and 4 in `'batch'` format, as the server sender's.
   */
  maxInFlight?: number
  /** Milliseconds a request may go unanswered, and events may wait for a free request. Default 10,000. */
  timeout?: number
}

// Requests in flight by default in 'spec' format. Each carries one event per round trip, so 16
// carry 800 events a second from a service 20 ms away, 320 from 50 ms. On loopback the relay's
// CPU is the bound from 4 in flight up (about 2,400 events per CPU-second, bench/relay.mjs), so
// more would only help a far service; and a service whose rate limits SPEC does not show sees
// no more than 16 requests at once from an instance. A shop that needs more raises it.
const SPEC_IN_FLIGHT = 16
const BATCH_IN_FLIGHT = 4

/**
 * The failure of a call as the relay hears it: SinkUnavailable, naming what got through, once
 * anything did; its wait the longest its requests were told, since each failure of one step
 * moves the backoff's end (`retryAt`, ms since epoch).
 */
function callFailure(failure: Error, delivered: RelayEvent[], retryAt: number): Error {
  if (failure instanceof SinkUnavailable || delivered.length) return new SinkUnavailable(failure.message, Math.max(0, retryAt - Date.now()), delivered)
  return failure
}

/**
 * One call's events as waiting entries, and `done` once each was told its fate: with nothing when all
 * were answered 2xx, otherwise with the first failure, naming the events that did get through (a
 * call's events may go in several requests) so that the relay marks them delivered. Events still
 * waiting after `timeout` are `withdrawn` and given up, so that a call never lasts longer than two
 * timeouts: the relay's claims (claimMs) must outlast it.
 */
function callEntries(events: RelayEvent[], timeout: number, withdraw: (entries: Set<Waiting>) => Waiting[], done: (failure?: Error) => void): Waiting[] {
  let left = events.length
  let failure: Error | undefined
  let retryAt = 0
  const delivered: RelayEvent[] = []
  const teller = (event: RelayEvent) => (error?: Error) => {
    if (error) failure ||= error
    else delivered.push(event)
    if (error instanceof SinkUnavailable) retryAt = Math.max(retryAt, Date.now() + error.retryAfterMs)
    if (--left) return
    clearTimeout(expiry)
    done(failure && callFailure(failure, delivered, retryAt))
  }
  const entries = events.map((event) => ({ event, tell: teller(event) }))
  // Answers come later, in another task, when the expiry is set.
  const expiry = setTimeout(() => {
    const expired = new SinkUnavailable('no request was free for ' + timeout + ' ms', 1000)
    withdraw(new Set(entries)).forEach(({ tell }) => tell(expired))
  }, timeout)
  return entries
}

/**
 * forwardSink's sink: events, or in format 'batch' the relay's dead letters; `waiting()` counts
 * the events it holds that the service has not answered yet (the relay's metrics read it).
 */
export type ForwardSink = Sink & Sink<DeadLetter> & { waiting(): number }

const lowerCased = (headers: Record<string, string>) => Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]))

/**
 * Forwards accepted events to the service: by default one SPEC envelope a request, many requests
 * in flight over keep-alive connections (`format: 'spec'`); or batched, what arrives while
 * requests are in flight going together (`format: 'batch'`). At most `maxInFlight` requests at
 * once, with the HTTP policy of both senders (shared/http.ts): after a failure one request at a
 * time, and every caller told to come back after the backoff. A call resolves once every one of
 * its events was answered 2xx; it rejects when one failed, or at once while the service is backed
 * off, so the relay answers 503 and the browser keeps the events. A refusal (a 4xx but 408 and
 * 429) rejects too: mostly a wrong key or route, which must not lose events.
 */
export function forwardSink(options: ForwardSinkOptions): ForwardSink {
  const { url, key, format = 'spec', timeout = 10000 } = options
  if (format != 'spec' && format != 'batch')
    throw new TypeError(`discovery-feedback: relay: forwardSink's format must be 'spec' or 'batch', not ${JSON.stringify(format)}`)
  const headers = lowerCased(options.headers || {})
  const store = createMemoryStore<Waiting>()
  const tell = (entries: Waiting[], error?: Error) => {
    store.remove(entries)
    entries.forEach((entry) => entry.tell(error))
  }
  const unavailable = () => new SinkUnavailable('the service is backed off after a failure', Math.max(0, engine.resumeAt() - Date.now()))

  const engine = createEngine<Waiting, Outgoing>(store, {
    take: (waiting, most, oversized) => (format == 'spec' ? specRequests(waiting, most, key, headers) : batchRequests(waiting, most, key, headers, oversized)),
    async post(request) {
      const answer = await postToService(url, request, timeout)
      request.message = answer.message
      return answer
    },
    answered(request, answer, outcome) {
      tell(request.entries, outcome == 'delivered' ? undefined : request.refusal(answer.status, request.message!))
      // Nothing waits for others: what waited goes in this task, with the request just freed.
      engine.send()
    },
    // The sink does not retry: the relay answers 503 and the browser keeps the events. Every
    // call waiting is told at once too, and its events stay with the browser.
    retry(request) {
      const failure = unavailable()
      tell(request.entries, failure)
      tell(
        store.entries.filter((entry) => !entry.sending),
        failure
      )
      return []
    },
    most: options.maxInFlight ?? (format == 'spec' ? SPEC_IN_FLIGHT : BATCH_IN_FLIGHT),
    interval: 0,
    probeFirst: true,
    // An event too large for any request is given up at once; a refusal is told by `answered`,
    // with the service's own message and, in format 'spec', the event's name.
    drop: (entries, reason) => {
      if (reason == 'too_large') tell(entries, new Error('an event is too large to forward'))
    }
  })

  const withdraw = (mine: Set<Waiting>) => {
    const expired = store.entries.filter((entry) => mine.has(entry) && !entry.sending)
    store.remove(expired)
    return expired
  }

  const forward = (events: RelayEvent[]) => {
    if (!events.length) return Promise.resolve()
    // A dead letter is no SPEC envelope: only a collector of arrays takes it.
    if (format == 'spec' && typeof events[0].event != 'string')
      return Promise.reject(new TypeError("discovery-feedback: relay: dead letters go by forwardSink's format 'batch'"))
    if (Date.now() < engine.resumeAt()) return Promise.reject(unavailable())
    return new Promise<void>((resolve, reject) => {
      callEntries(events, timeout, withdraw, (failure) => (failure ? reject(failure) : resolve())).forEach(store.add)
      engine.send()
    })
  }
  return Object.assign(forward, { waiting: () => store.entries.length }) as ForwardSink
}
