import { pack, type Packed } from '../shared/batch'
import { envelope } from '../shared/envelope'
import { feedbackError } from '../shared/error'
import { checkUser, validate } from '../shared/rules'
import { createBackoff, outcomeOf, withSendTime } from '../shared/http'
import type { User } from '../shared/types'
import { postBatch } from './post'
import type { ServerTracker, ServerTrackerOptions } from './types'

/** A queued event and the tries it has had. */
type Queued = Packed & { tries?: number }

const BODY_BYTES = 61440

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
 * Sends events from a shop's backend (Node 18+, global fetch), with the browser's rules (the
 * HTTP policy of shared/http.ts): a few requests at a time under one backoff for the whole
 * sender, one at a time while the collector is not known to answer, with bounded memory.
 */
export function createServerTracker(options: ServerTrackerOptions): ServerTracker {
  const {
    key,
    endpoint,
    maxBatchEvents = 50,
    flushInterval = 1000,
    maxInFlight = 4,
    maxQueuedEvents = 20000,
    maxAttempts = 6,
    requestTimeout = 10000
  } = options
  if (!key || !endpoint) throw feedbackError('init', key ? 'endpoint' : 'key', 'is required')
  const counts = { sent: 0, retried: 0 }
  const dropped = { invalid: 0, too_large: 0, rejected: 0, overflow: 0, undelivered: 0 }
  let queue: Queued[] = []
  const inFlight = new Set<AbortController>()
  let carried = 0
  // Probing from the start: a process that starts during an outage (a deploy, a restart loop)
  // sends one request, not maxInFlight, until the collector answers.
  const backoff = createBackoff({ probeFirst: true })
  let timer: ReturnType<typeof setTimeout> | undefined
  let due = Infinity
  let hurry = false
  let closed = false
  const idle = new Set<() => void>()

  const report = (error: Error) => {
    try {
      if (options.onError) options.onError(error)
      else console.error(error.message)
    } catch {
      // A failing handler must not turn one fault into two.
    }
  }
  const drop = (count: number, reason: keyof typeof dropped, why: string) => {
    dropped[reason] += count
    report(feedbackError(undefined, undefined, count + (count == 1 ? ' event' : ' events') + ' dropped: ' + why))
  }
  // Overflow is reported once per burst, not once per event of a 50,000-event burst.
  let overflowing = 0
  const overflow = (count: number) => {
    if (!overflowing) {
      queueMicrotask(() => {
        drop(overflowing, 'overflow', 'more than ' + maxQueuedEvents + ' waited for the collector')
        overflowing = 0
      })
    }
    overflowing += count
  }

  /** Runs `pump` at `at` (ms since epoch), or sooner if it is already due sooner. */
  const wake = (at: number) => {
    if (at >= due) return
    clearTimeout(timer)
    due = at
    timer = setTimeout(
      () => {
        due = Infinity
        pump()
      },
      Math.max(0, at - Date.now())
    )
  }

  function settle() {
    if (!queue.length && !inFlight.size) idle.forEach((resolve) => resolve())
  }

  /** Starts requests while a slot is free, the backoff allows and a batch is ready (or asked for). */
  function pump() {
    const now = Date.now()
    if (now < backoff.resumeAt()) return wake(backoff.resumeAt())
    while (queue.length && inFlight.size < backoff.slots(maxInFlight)) {
      // t_client is when the oldest was tracked; a clock set back meanwhile must not hold it longer.
      const oldest = Math.min(queue[0].event.t_client, now)
      if (!hurry && queue.length < maxBatchEvents && now - oldest < flushInterval) return wake(oldest + flushInterval)
      // One body at a time, as large as 60 KiB allows: events that waited for a slot go together.
      const taken = new Set<Queued>()
      const tooLarge = (entry: Queued) => {
        taken.add(entry)
        drop(1, 'too_large', entry.event.event + ' is too large for a request')
      }
      const [batch] = pack(queue, BODY_BYTES, tooLarge, 1)
      if (batch) batch.entries.forEach((entry) => taken.add(entry))
      queue = queue.filter((entry) => !taken.has(entry))
      if (batch) send(batch.body, batch.entries)
    }
    settle()
  }

  async function send(body: string, batch: Queued[]) {
    const controller = new AbortController()
    inFlight.add(controller)
    carried += batch.length
    const step = backoff.step()
    const { status, retryAfter } = await postBatch(withSendTime(endpoint, Date.now()), body, requestTimeout, controller, options.secret)
    // Given up by close(): already counted there, and no longer carried.
    if (!inFlight.delete(controller)) return
    carried -= batch.length
    const outcome = outcomeOf(status)
    if (outcome == 'delivered') {
      counts.sent += batch.length
      backoff.answered()
    } else if (outcome == 'refused') {
      // Refused, but answered: the collector is up.
      backoff.answered()
      drop(batch.length, 'rejected', 'the collector answered ' + status)
    } else {
      backoff.failed(step, retryAfter)
      for (const entry of batch) entry.tries = (entry.tries || 0) + 1
      const spent = batch.filter((entry) => entry.tries! >= maxAttempts)
      const again = batch.filter((entry) => entry.tries! < maxAttempts)
      if (spent.length) drop(spent.length, 'undelivered', 'the collector answered ' + (status || 'nothing') + ' ' + maxAttempts + ' times')
      counts.retried += again.length
      // Back at the front, in their order: they are the oldest.
      queue = [...again, ...queue]
    }
    pump()
  }

  /** Resolves when nothing waits or flies, or after `timeout` ms: true if it timed out. */
  function drain(timeout: number): Promise<boolean> {
    hurry = true
    pump()
    if (!queue.length && !inFlight.size) return Promise.resolve(false)
    return new Promise((resolve) => {
      const done = (late: boolean) => {
        clearTimeout(limit)
        idle.delete(finished)
        if (!idle.size) hurry = closed
        resolve(late)
      }
      const finished = () => done(false)
      const limit = setTimeout(() => done(true), timeout)
      idle.add(finished)
    })
  }

  return {
    track(event, properties, user) {
      if (closed) throw feedbackError(event, undefined, 'was tracked after close()')
      let entry: Queued
      try {
        const shopper = serverUser(event, user)
        entry = { event: envelope(event, validate(event, properties), key, shopper) }
      } catch (error) {
        dropped.invalid++
        throw error
      }
      queue.push(entry)
      if (queue.length > maxQueuedEvents) {
        const over = queue.length - maxQueuedEvents
        queue = queue.slice(over)
        overflow(over)
      }
      if (queue.length >= maxBatchEvents) pump()
      else wake(entry.event.t_client + flushInterval)
    },
    flush: ({ timeout = 10000 } = {}) => drain(timeout).then(() => {}),
    close({ timeout = 10000 } = {}) {
      closed = true
      return drain(timeout).then((late) => {
        if (!late) return
        // Out of time: what waits or flies now is given up, and said so.
        const left = queue.length + carried
        queue = []
        carried = 0
        inFlight.forEach((controller) => controller.abort())
        inFlight.clear()
        clearTimeout(timer)
        if (left) drop(left, 'undelivered', 'close() ran out of time after ' + timeout + ' ms')
      })
    },
    stats: () => ({ queued: queue.length + carried, ...counts, dropped: { ...dropped } })
  }
}
