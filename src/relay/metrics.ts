/*
 * What one relay did, for an operator to scrape (docs/guide/relay.md, metrics): in the
 * Prometheus text format, by prom-client in a registry of the relay's own, so that two relays in
 * one process never mix their counts, and nothing lands in prom-client's global registry. Labels
 * are outcomes, status codes and store operations only: a handful of series each, whatever the
 * traffic, since a key, a path or an address as a label would make a series per value.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { ForwardSink } from './forward-sink'
import { COMPARED_FIELDS } from './order-figures'
import type { DeliveryStore, OrderReport, Sink } from './types'

/** What an event became: stored now, stored before, refused by the rules or the keys, or sent by a bot. */
export type EventOutcome = 'accepted' | 'duplicate' | 'rejected' | 'bot'

/** Why the relay answered 503: its sink failed, its store failed, or another request holds the events. */
export type Unavailable = 'sink' | 'store' | 'held'

/** What became of a call to the dead-letter sink, or of refused envelopes it never got. */
export type DeadLetterResult = 'delivered' | 'failed' | 'dropped'

// Seconds. A store call on a local Redis takes under a millisecond; forwardSink's longest call
// is two timeouts (20 s by default).
const STORE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]
const SINK_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20]

export type Metrics = ReturnType<typeof relayMetrics>

/** The metrics of a relay with this sink, which may count the events waiting in it (forwardSink's `waiting`). */
export function relayMetrics(relaySink: Sink) {
  const waiting = (relaySink as Partial<ForwardSink>).waiting?.bind(relaySink)
  const registry = new Registry()
  const registers = [registry]
  const events = new Counter({ name: 'df_relay_events_total', help: 'Envelopes by what became of them.', labelNames: ['outcome'], registers })
  const requests = new Counter({ name: 'df_relay_requests_total', help: 'Requests answered, by status code.', labelNames: ['status'], registers })
  const unavailable = new Counter({ name: 'df_relay_unavailable_total', help: 'Requests answered 503, by why.', labelNames: ['reason'], registers })
  const deadLetters = new Counter({
    name: 'df_relay_dead_letters_total',
    help: 'Refused envelopes by what became of them at the dead-letter sink.',
    labelNames: ['result'],
    registers
  })
  const sink = new Histogram({ name: 'df_relay_sink_duration_seconds', help: 'Calls of the sink.', labelNames: ['result'], buckets: SINK_BUCKETS, registers })
  const store = new Histogram({
    name: 'df_relay_store_duration_seconds',
    help: 'Calls of the delivery store, by operation.',
    labelNames: ['operation'],
    buckets: STORE_BUCKETS,
    registers
  })
  new Gauge({
    name: 'df_relay_sink_waiting_events',
    help: 'Events handed to the sink and not yet answered (forwardSink: its queue and its requests in flight).',
    registers,
    collect() {
      this.set(waiting?.() ?? 0)
    }
  })
  const orders = new Counter({
    name: 'df_relay_order_reports_total',
    help: "Orders by who reported them: once as an order's first copy reached the sink (order=first), by its reporter (browser: page, pixel or GA4 bridge; server: the shop's server sender), and once more as the other reporter's copy came (order=second).",
    labelNames: ['reporter', 'order'],
    registers
  })
  const differences = new Counter({
    name: 'df_relay_order_differences_total',
    help: "The other reporter's copies of an order that differed from the first copy, which is the one that counts, by field.",
    labelNames: ['field'],
    registers
  })
  // Every label value at 0 from the start: a rate over a series that appears late misses its first increase.
  for (const reporter of ['browser', 'server']) for (const order of ['first', 'second']) orders.inc({ reporter, order }, 0)
  for (const field of COMPARED_FIELDS) differences.inc({ field }, 0)
  for (const outcome of ['accepted', 'duplicate', 'rejected', 'bot']) events.inc({ outcome }, 0)
  for (const reason of ['sink', 'store', 'held']) unavailable.inc({ reason }, 0)
  for (const result of ['delivered', 'failed', 'dropped']) deadLetters.inc({ result }, 0)

  return {
    events: (outcome: EventOutcome, count: number) => count && events.inc({ outcome }, count),
    request: (status: number) => requests.inc({ status: String(status) }),
    unavailable: (reason: Unavailable) => unavailable.inc({ reason }),
    deadLetters: (result: DeadLetterResult, count: number) => deadLetters.inc({ result }, count),
    /** Counts purchases in their orders' coverage, and the fields in which a second copy differed from the first. */
    orders(reports: OrderReport[]) {
      for (const { reporter, order, differences: fields } of reports) {
        orders.inc({ reporter, order })
        for (const field of fields) differences.inc({ field })
      }
    },
    sink: (seconds: number, ok: boolean) => sink.observe({ result: ok ? 'delivered' : 'failed' }, seconds),
    store: (operation: string, seconds: number) => store.observe({ operation }, seconds),
    text: () => registry.metrics()
  }
}

const seconds = (since: number) => (performance.now() - since) / 1000

/** Times a call of a store's method, failed or not. */
function timed<T>(operation: string, metrics: Metrics, call: () => Promise<T>): Promise<T> {
  const started = performance.now()
  const observe = () => metrics.store(operation, seconds(started))
  return call().finally(observe)
}

/** The store with each call timed into `metrics`; a store without `take` stays without. */
export function timedStore(store: DeliveryStore, metrics: Metrics): DeliveryStore {
  const timedOne: DeliveryStore = {
    claim: (ids, token, ttlMs) => timed('claim', metrics, () => store.claim(ids, token, ttlMs)),
    delivered: (ids, token, owners) => timed('delivered', metrics, () => store.delivered(ids, token, owners)),
    release: (ids, token) => timed('release', metrics, () => store.release(ids, token)),
    // A request asks about no purchases mostly: a question of no ids asks the store nothing.
    lookup: (ids) => (ids.length ? timed('lookup', metrics, () => store.lookup(ids)) : store.lookup(ids))
  }
  if (store.take) timedOne.take = (name, cost, limit) => timed('take', metrics, () => store.take!(name, cost, limit))
  return timedOne
}

/** Starts a timer for a sink call: call the result with whether the sink took the events. */
export const sinkTimer = (metrics: Metrics) => {
  const started = performance.now()
  return (ok: boolean) => metrics.sink(seconds(started), ok)
}
