import { createEngine } from '../shared/engine'
import type { Answer } from '../shared/post'
import { clientQueues } from './client-queues'
import { callEntries } from './forward-calls'
import { batchRequests, specRequests, type Outgoing, type Waiting } from './forward-requests'
import { serviceConnection } from './service-connection'
import { SinkRefusal } from './sink-refusal'
import { SinkUnavailable } from './sink-unavailable'
import type { DeadLetter, RelayEvent, Sink, SinkSource } from './types'

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
   * Requests in flight at once, on 4 keep-alive connections to the service: pipelined over
   * HTTP/1.1, or as streams where the service speaks HTTP/2 (service-connection.ts). Default 64
   * in `'spec'` format, where each event is a request of its own, and 4 in `'batch'` format, as
   * the server sender's.
   */
  maxInFlight?: number
  /** Milliseconds a request may go unanswered, and events may wait for a free request. Default 10,000. */
  timeout?: number
}

// Requests in flight by default in 'spec' format, where each carries one event: on 4
// connections, 16 each, one after another without waiting for answers (service-connection.ts).
// On loopback the relay's CPU is the bound, not the round trip (bench/relay.mjs); from a
// service 20 ms away, 64 in flight carry 3,200 events a second.
const SPEC_IN_FLIGHT = 64
const BATCH_IN_FLIGHT = 4

// Events of one client that may wait for the service at once; a call beyond is refused at once
// with SinkUnavailable, so the relay answers that client 503 with Retry-After (the timeout, by
// when what it has waiting is settled). Twenty batches of 50 events, half the rate limit's burst
// (2,000): a client's backlog is served in turn with every other's (client-queues.ts), and this
// bounds what one client holds in memory and how long its own events wait.
const CLIENT_SHARE = 1000

// A 4xx for one event while the service took others within this long is that event's fault,
// and it is refused for good (SinkRefusal). A service that took nothing for this long, or at all,
// may be set up wrong (a wrong key or route): its refusals fail the call, and the events stay
// with their senders.
const TRUSTED_FOR_MS = 60000

/**
 * forwardSink's sink: events, or in format 'batch' the relay's dead letters; `waiting()` counts
 * the events it holds that the service has not answered yet (the relay's metrics read it).
 */
export type ForwardSink = Sink & Sink<DeadLetter> & { waiting(): number }

const lowerCased = (headers: Record<string, string>) => Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]))

/**
 * Forwards accepted events to the service: by default one SPEC envelope a request, many requests
 * in flight over a few connections (`format: 'spec'`); or batched, what arrives while requests
 * are in flight going together (`format: 'batch'`). Each client's events (SinkSource) wait in a
 * queue of their own, and the queues are served in turn. At most `maxInFlight` requests at
 * once, with the HTTP policy of both senders (shared/http.ts): after a failure one request at a
 * time, and every caller told to come back after the backoff. A call resolves once every one of
 * its events was answered 2xx; it rejects when one failed, or at once while the service is backed
 * off or its client has `CLIENT_SHARE` events waiting, so the relay answers 503 and the browser
 * keeps the events. A refusal (a 4xx but 408 and 429) of an event in format 'spec', while the
 * service takes others, rejects with SinkRefusal naming it: the relay answers it rejected. Any
 * other refusal rejects as a failure: mostly a wrong key or route, which must not lose events.
 */
export function forwardSink(options: ForwardSinkOptions): ForwardSink {
  const { url, key, format = 'spec', timeout = 10000 } = options
  if (format != 'spec' && format != 'batch')
    throw new TypeError(`discovery-feedback: relay: forwardSink's format must be 'spec' or 'batch', not ${JSON.stringify(format)}`)
  if (!/^https?:\/\//.test(String(url)) || !URL.canParse(url))
    throw new TypeError(`discovery-feedback: relay: forwardSink's url must be the service's http or https URL, not ${JSON.stringify(url)}`)
  const headers = lowerCased(options.headers || {})
  const most = options.maxInFlight ?? (format == 'spec' ? SPEC_IN_FLIGHT : BATCH_IN_FLIGHT)
  const post = serviceConnection(url, most, timeout)
  const spec = specRequests(key, headers)
  const store = clientQueues<Waiting>(format == 'spec' ? most : Infinity)
  let tookAt = -Infinity
  const tell = (entries: Waiting[], error?: Error) => {
    store.remove(entries)
    entries.forEach((entry) => entry.tell(error))
  }
  const unavailable = () => new SinkUnavailable('the service is backed off after a failure', Math.max(0, engine.resumeAt() - Date.now()))
  /** The error of a refused request: the event's own fault where the service takes others. */
  const refusalOf = (request: Outgoing, answer: Answer) => {
    const error = request.refusal(answer.status, request.message!)
    if (format == 'batch' || Date.now() - tookAt > TRUSTED_FOR_MS) return error
    return new SinkRefusal(request.entries.map(({ event }) => ({ event, error: error.message })))
  }

  const engine = createEngine<Waiting, Outgoing>(store, {
    take(waiting, most, oversized) {
      const requests = format == 'spec' ? spec(waiting, most) : batchRequests(waiting, most, key, headers, oversized)
      for (const request of requests) store.taken(request.entries)
      return requests
    },
    async post(request) {
      const answer = await post(request.body, request.headers)
      request.message = answer.message
      return answer
    },
    answered(request, answer, outcome) {
      if (outcome == 'delivered') tookAt = Date.now()
      tell(request.entries, outcome == 'delivered' ? undefined : refusalOf(request, answer))
      // Nothing waits for others: what waited goes in this task, with the request just freed.
      engine.send()
    },
    // The sink does not retry: the relay answers 503 and the browser keeps the events. Every
    // call waiting is told at once too, and its events stay with the browser.
    retry(request) {
      const failure = unavailable()
      tell(request.entries, failure)
      tell(store.clear(), failure)
      return []
    },
    most,
    interval: 0,
    probeFirst: true,
    // An event too large for any request is given up at once; a refusal is told by `answered`,
    // with the service's own message and, in format 'spec', the event's name.
    drop: (entries, reason) => {
      if (reason == 'too_large') tell(entries, new Error('an event is too large to forward'))
    }
  })

  const forward = (events: RelayEvent[], from?: SinkSource) => {
    if (!events.length) return Promise.resolve()
    // A dead letter is no SPEC envelope: only a collector of arrays takes it.
    if (format == 'spec' && typeof events[0].event != 'string')
      return Promise.reject(new TypeError("discovery-feedback: relay: dead letters go by forwardSink's format 'batch'"))
    if (Date.now() < engine.resumeAt()) return Promise.reject(unavailable())
    const client = from?.client ?? ''
    const waiting = store.waitingOf(client)
    if (waiting && waiting + events.length > CLIENT_SHARE)
      return Promise.reject(new SinkUnavailable(`the client has ${waiting} events waiting for the service, its share being ${CLIENT_SHARE}`, timeout))
    return new Promise<void>((resolve, reject) => {
      callEntries(events, client, timeout, store.withdraw, (failure) => (failure ? reject(failure) : resolve())).forEach(store.add)
      engine.send()
    })
  }
  return Object.assign(forward, { waiting: store.size }) as ForwardSink
}
