import type { EngineRequest, Queued, SendCounts, Store, Transport } from './engine-types'
import { createBackoff, verdictOf } from './http'
import type { Answer } from './post'

export type { DropReason, EngineDropReason, EngineRequest, Queued, SendCounts, Store, Transport } from './engine-types'

/*
 * The one sender every product runs: the storefront tracker, the Shopify pixel, the Node sender
 * and the relay's forward sink. Each passes in its store and its transport (how it makes, posts
 * and settles requests); the engine keeps the rest to itself: the requests in flight, the
 * backoff, the timer, the counts, and the rule for an event too large for any request. Words
 * used with one meaning each, here and in the products:
 *   entry    one queued event; `sending` while a request carries it
 *   store    where entries wait, oldest first (the tracker's outbox, the pixel's kept queue, memory)
 *   request  one POST: a body, the entries it carries and those it asks about (`checks`)
 *   due      when the next request should start
 *   send     start requests for what waits, as many as the in-flight bound and the backoff allow
 *   settle   decide the entries of a request by its answer: delivered, rejected, or tried again
 *   flush    send everything now, and resolve once each request was answered or one failed
 *   leave    hand everything over as the page goes, by the product's own means
 */

/**
 * Sends the entries of `store` through `transport`: a request when `batch` entries wait or the
 * oldest has waited `interval`, at most `most` in flight, under one backoff for the whole sender
 * (shared/http.ts): after a failure one request at a time, a probe, with a growing wait between
 * them, then up to `most` again once one is answered. 2xx removes a request's entries, another
 * 4xx but 408 and 429 drops them as `rejected`, anything else keeps them for after the backoff.
 */
export function createEngine<E extends Queued, R extends EngineRequest<E>>(store: Store<E>, transport: Transport<E, R>) {
  const { most, interval, batch = Infinity } = transport
  const backoff = createBackoff(transport.probeFirst)
  const inFlight = new Set<R>()
  const counts: SendCounts = { sent: 0, retried: 0 }
  let timer: ReturnType<typeof setTimeout> | undefined
  let due = Infinity
  // The flush() calls under way: while there are any, everything waiting goes, a request after
  // each answer, until none waits.
  const flushing: (() => void)[] = []

  /** Ends every flush(): nothing is left to send, or a failure now waits out the backoff. */
  const endFlush = () => flushing.splice(0).forEach((resolve) => resolve())

  const stop = () => {
    clearTimeout(timer)
    due = Infinity
  }

  /** Sends at `at` (ms since epoch), or sooner if a send is already due sooner; never before the backoff allows. */
  const schedule = (at: number) => {
    at = Math.max(at, backoff.resumeAt())
    if (at < due) {
      clearTimeout(timer)
      due = at
      timer = setTimeout(send, at - Date.now())
    }
  }

  /**
   * Plans the next send: now for a full batch, else when the first waiting entry of `entries`
   * is due. Nothing while every slot is taken: the next answer plans.
   */
  const plan = (entries = store.entries) => {
    if (inFlight.size >= backoff.slots(most)) return
    const now = Date.now()
    let at = Infinity
    let fresh = 0
    for (const entry of entries) {
      if (entry.sending) continue
      const own = transport.due?.(entry)
      if (own == null) fresh++
      // Its own time if the product gives one, else `interval` after it was tracked: a clock
      // set back meanwhile must not hold it longer.
      at = Math.min(at, own ?? Math.min(entry.event.t_client, now) + interval)
    }
    schedule(fresh >= batch ? 0 : at)
  }

  /** Marks what a request carries or asks about as sending, or no longer. */
  const mark = (request: R, sending: boolean) => request.entries.concat(request.checks || []).forEach((entry) => (entry.sending = sending))

  /** An entry too large for any request: removed, and dropped. */
  const oversized = (entry: E) => {
    store.remove([entry])
    transport.drop?.([entry], 'too_large')
  }

  /** POSTs one request and settles its entries by the answer. */
  const start = (request: R) => {
    inFlight.add(request)
    mark(request, true)
    const step = backoff.step()
    transport.post(request).then((answer) => {
      // Forgotten meanwhile (forget()): it is settled already.
      if (inFlight.delete(request)) settle(request, answer, step)
    })
  }

  const settle = (request: R, answer: Answer, step: number) => {
    const { entries } = request
    mark(request, false)
    const verdict = verdictOf(answer.status)
    if (verdict == 'retry') {
      backoff.failed(step, answer.retryAfter)
      counts.retried += (transport.retry?.(request, answer) || entries).length
      endFlush()
      if (store.entries.length) schedule(backoff.resumeAt())
      return
    }
    // Rejected, but answered: the collector is up.
    backoff.answered()
    store.remove(entries)
    if (verdict == 'delivered') counts.sent += entries.length
    else if (entries.length) transport.drop?.(entries, 'rejected', 'the collector answered ' + answer.status, answer.message)
    transport.answered?.(request, answer, verdict)
    if (flushing.length) send()
    else plan()
  }

  /** Sends what waits now, as many requests as there are free slots. */
  function send() {
    stop()
    if (transport.allowed?.() === false) return endFlush()
    const free = backoff.slots(most) - inFlight.size
    // Every slot taken: the next answer sends on.
    if (free <= 0) return
    if (Date.now() < backoff.resumeAt()) {
      // Backing off after a failure: a flush() ends here, and the timer sends later.
      endFlush()
      return plan()
    }
    const requests = transport.take(
      store.entries.filter((entry) => !entry.sending),
      free,
      oversized
    )
    // Nothing to send: a flush() ends once the requests in flight were answered too.
    if (!requests.length && !inFlight.size) endFlush()
    requests.forEach(start)
    plan()
  }

  return {
    send,
    stop,
    /**
     * An entry was added to the end of the store: a full batch leaves now, anything less when
     * due. Only then is the store walked; else only the new entry can make a send due sooner.
     */
    queued() {
      const { entries } = store
      plan(entries.length < batch ? entries.slice(-1) : entries)
    },
    /** Sends everything waiting now; resolves once none waits and none is in flight, or a request failed. */
    flush(): Promise<void> {
      const flushed = new Promise<void>((resolve) => flushing.push(resolve))
      send()
      return flushed
    },
    /**
     * The page is going: the product hands over what it can by its own means (`handOver`, told
     * whether the collector is being probed after a failure, and given the engine's rule for an
     * entry too large for any request and `start` for a request that may still get out), the
     * backoff notwithstanding. It returns how many events it handed over by other means, which
     * count as sent. Every flush() ends, since nothing is left for it to wait for.
     */
    leave(handOver: (probing: boolean, oversized: (entry: E) => void, start: (request: R) => void) => number) {
      stop()
      if (transport.allowed?.() === false) return endFlush()
      counts.sent += handOver(backoff.probing(), oversized, start)
      endFlush()
    },
    /** Something changed that lets requests go now (back online, consent granted): the backoff's wait is forgotten, and what waits is sent. */
    wake() {
      backoff.reset()
      send()
    },
    /**
     * The requests in flight will never be answered (a page back from the back/forward cache, a
     * sender that closed): none counts as in flight any more, and what they carried waits again.
     */
    forget() {
      inFlight.forEach((request) => mark(request, false))
      inFlight.clear()
    },
    /** When the backoff lets the next request go (ms since epoch; 0 or past when it does now). */
    resumeAt: backoff.resumeAt,
    /**
     * The keepalive bytes the requests in flight hold (shared/keepalive.ts). A loop, not
     * reduce(): Prototype.js 1.6 replaces Array.prototype.reduce with a function that ignores
     * its arguments, and keepalive would never be used on such pages.
     */
    keepaliveInUse() {
      let sum = 0
      for (const request of inFlight) sum += request.held || 0
      return sum
    },
    stats: (): SendCounts => ({ ...counts })
  }
}

export type Engine<E extends Queued, R extends EngineRequest<E>> = ReturnType<typeof createEngine<E, R>>
