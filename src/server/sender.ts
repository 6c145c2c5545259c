import { envelope } from '../shared/envelope'
import { createEngine } from '../shared/engine'
import { feedbackError } from '../shared/error'
import { createEventPath } from '../shared/event-path'
import { createMemoryStore } from '../shared/memory-store'
import { checkUser } from '../shared/rules'
import type { EventName, User } from '../shared/types'
import { createServerFaults, type ServerDropReason } from './faults'
import { registerOrderDelivery, type DeliverOrder, type OrderFate } from './order-delivery'
import { createServerTransport, type ServerEntry, type ServerRequest } from './transport'
import type { ServerTracker, ServerTrackerOptions } from './types'

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** What a call carries to the queue beside its event: the shopper, and who waits to hear what became of it (an order webhook). */
interface ServerCall {
  shopper: User
  settled?: ServerEntry['settled']
}

/**
 * The shopper of a call from the shop's server, checked: SPEC's user fields, with uid and sid
 * (the ids the browser had) and, as SPEC asks of calls not made from the shopper's browser,
 * ip and ua.
 */
function serverUser(event: string, user: unknown): User {
  const checked = checkUser(event, user)
  for (const field of ['uid', 'sid', 'ip', 'ua'] as const) {
    if (!checked[field]) {
      const hint = field == 'ip' || field == 'ua' ? "the shopper's, as SPEC asks for calls not made from their browser" : "the id the shopper's browser had"
      throw feedbackError(event, 'user.' + field, 'is required on the server: ' + hint)
    }
  }
  return checked as User
}

/**
 * Sends events from a shop's backend (Node 18+, global fetch) through the engine every sender
 * runs (shared/engine.ts), from memory: a few requests at a time under one backoff for the whole
 * sender, one at a time while the collector is not known to answer, with bounded memory. What
 * is its own: the secret, a timeout per request, a number of tries per event, and flush() and
 * close() that wait through failures until a timeout.
 * @param options - The key, the collector's URL, the secret, and the queue's bounds.
 */
export function createServerTracker(options: ServerTrackerOptions): ServerTracker {
  const { key, endpoint, maxBatchEvents = 50, flushInterval = 1000, maxInFlight = 4, maxQueuedEvents = 20000 } = options
  if (!key || !endpoint) throw feedbackError('init', key ? 'endpoint' : 'key', 'is required')
  const dropped = { invalid: 0, too_large: 0, rejected: 0, overflow: 0, undelivered: 0 }
  const store = createMemoryStore<ServerEntry>()
  const faults = createServerFaults(options.onError, dropped)
  /** Given up entries are counted and reported, and whoever waits on one (an order webhook) is told. */
  const drop = (entries: ServerEntry[], reason: ServerDropReason, detail?: string, said?: string) => {
    faults.drop(entries, reason, detail, said)
    for (const entry of entries) entry.settled?.(reason)
  }
  // Probing from the start: a process that starts during an outage (a deploy, a restart loop)
  // sends one request, not maxInFlight, until the collector answers.
  const transport = createServerTransport(options, store, drop)
  const engine = createEngine<ServerEntry, ServerRequest>(store, {
    ...transport,
    answered(request, _answer, verdict) {
      if (verdict == 'delivered') for (const entry of request.entries) entry.settled?.('delivered')
    },
    most: maxInFlight,
    interval: flushInterval,
    batch: maxBatchEvents,
    probeFirst: true
  })
  let closed = false

  /** Beyond maxQueuedEvents waiting, the oldest go. */
  const overflow = (excess: number) => {
    const over: ServerEntry[] = []
    for (const entry of store.entries) {
      if (over.length == excess) break
      if (!entry.sending) over.push(entry)
    }
    store.remove(over)
    faults.overflow(over.length, maxQueuedEvents)
    for (const entry of over) entry.settled?.('overflow')
  }

  /**
   * Queues an event in its envelope, under the shopper the call named, with whoever waits to
   * hear what became of it (an order webhook's purchase).
   */
  const queue = (event: EventName, properties: Record<string, unknown>, { shopper, settled }: ServerCall) => {
    store.add({ event: envelope(event, properties, key, shopper), settled })
    // Those a request carries are not counted: they are on their way. Counted, not walked:
    // this runs for every event of a burst.
    const count = store.entries.length - transport.carried()
    if (count > maxQueuedEvents) overflow(count - maxQueuedEvents)
    // A full batch leaves within this call: a burst's first request starts before it ends.
    if (count >= maxBatchEvents) engine.send()
    else engine.queued()
    return undefined
  }

  /**
   * The way every event takes (shared/event-path.ts): the rules, the events SPEC sends along
   * (an add-to-cart's click-item), then the queue. Nothing here is refused once it passed the
   * rules, so nothing sent along can fail: the server has no add-ons to change it.
   */
  const takeEvent = createEventPath<ServerCall>({ queue, failed: faults.report })

  /**
   * An order webhook's purchase: taken the way of every event (its rules' error thrown, nothing
   * queued), sent at once, and its fate told when it is known or `timeout` ms have passed.
   */
  const deliverOrder: DeliverOrder = (properties, user, timeout) => {
    // Closed: the process is going, and the platform is to send the order again.
    if (closed) return Promise.resolve('undelivered')
    const checked = checkUser('purchase', user)
    if (!checked.uid || !checked.sid) throw feedbackError('purchase', 'user.' + (checked.uid ? 'sid' : 'uid'), 'is required')
    let tell: (fate: OrderFate) => void = () => {}
    const fate = new Promise<OrderFate>((resolve) => (tell = resolve))
    takeEvent('purchase', properties, { shopper: checked as User, settled: (known) => tell(known) })
    const limit = setTimeout(() => tell('queued'), timeout)
    engine.send()
    return fate.finally(() => clearTimeout(limit))
  }

  /** Resolves when nothing waits or flies, or after `timeout` ms: true if it timed out. */
  async function drain(timeout: number): Promise<boolean> {
    let late = false
    let limit: ReturnType<typeof setTimeout> | undefined
    const expired = new Promise<void>((resolve) => (limit = setTimeout(() => resolve(void (late = true)), timeout)))
    // A flush ends at a failure; the sender waits out the backoff and flushes again.
    while (store.entries.length && !late) {
      await Promise.race([engine.flush(), expired])
      if (store.entries.length && !late) await Promise.race([pause(engine.resumeAt() - Date.now()), expired])
    }
    clearTimeout(limit)
    return late
  }

  const tracker: ServerTracker = {
    track(event, properties, user) {
      if (closed) throw feedbackError(event, undefined, 'was tracked after close()')
      try {
        takeEvent(event, properties, { shopper: serverUser(event, user) })
      } catch (error) {
        dropped.invalid++
        throw error
      }
    },
    flush: ({ timeout = 10000 } = {}) => drain(timeout).then(() => {}),
    close({ timeout = 10000 } = {}) {
      closed = true
      return drain(timeout).then((late) => {
        if (!late) return
        // Out of time: what waits or flies now is given up, and said so.
        transport.abandon()
        engine.forget()
        engine.stop()
        const left = store.clear()
        if (left.length) drop(left, 'undelivered', 'close() ran out of time after ' + timeout + ' ms')
      })
    },
    stats: () => ({ queued: store.entries.length, ...engine.stats(), dropped: { ...dropped } })
  }
  registerOrderDelivery(tracker, deliverOrder)
  return tracker
}
