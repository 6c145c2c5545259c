import type { Body, Packed } from './batch'
import { createBackoff, outcomeOf, type Outcome } from './http'
import type { Answer } from './post'

/*
 * The one sender every product runs: the storefront tracker, the Shopify pixel, the Node sender
 * and the relay's forward sink. Words used with one meaning each, here and in the products:
 *   entry    one queued event; `sending` while a request carries it
 *   store    where entries wait, oldest first (the tracker's outbox, the pixel's kept queue, memory)
 *   request  one POST: a body, the entries it carries and those it asks about (`checks`)
 *   due      when the next request should start
 *   send     start requests for what waits, as many as the in-flight bound and the backoff allow
 *   settle   decide the entries of a request by its answer: delivered, refused, or tried again
 *   flush    send everything now, and resolve once each request was answered or one failed
 */

/** Why accepted events were given up: one meaning each, whichever product counts them. */
export type DropReason =
  /** Larger than a request may be. */
  | 'too_large'
  /** The collector answered a 4xx other than 408 and 429: no retry can succeed. */
  | 'rejected'
  /** Beyond the bound of what may wait, oldest first (or, waiting for consent, newest). */
  | 'overflow'
  /** Older than a kept event may be (7 days). */
  | 'expired'
  /** Out of tries, or still unsent when the sender ran out of time. */
  | 'undelivered'

/** An entry of the engine: an event with its time of tracking, and whether a request carries it. */
export interface Queued extends Packed<{ t_client: number }> {
  sending?: boolean
}

/**
 * One POST: its body and the entries it carries, and any entries whose delivery it only asks
 * about (`checks`, docs/reference/collector-protocol.md), which the product settles itself.
 */
export type Request<E extends Queued> = Body<E> & { checks?: E[] }

/** Where entries wait, in order: the engine reads them and removes those that are settled. */
export interface Store<E extends Queued> {
  readonly entries: E[]
  remove(entries: E[]): void
}

/**
 * What a product gives the engine besides its store: how it makes and posts its requests, what
 * it adds to settling them, and its pace.
 */
export interface Transport<E extends Queued, R extends Request<E>> {
  /** The requests for entries that wait (`waiting`, oldest first), at most `most`. */
  take(waiting: E[], most: number): R[]
  /** POSTs one request; resolves the answer, status 0 for none. */
  post(request: R): Promise<Answer>
  /** After a delivered or refused request was settled. */
  answered?(request: R, answer: Answer, outcome: Outcome): void
  /** After a failure: what the product does with the entries; returns those tried again (default: all). */
  retry?(request: R, answer: Answer): E[] | void
  /** Requests in flight at most while the collector answers; one while it fails. */
  most: number
  /** Milliseconds an entry may wait for others to join its request. */
  interval: number
  /** Entries that make a request due at once. Default: none. */
  batch?: number
  /** Probe from the start: one request until the collector first answers (a server that starts in an outage). */
  probeFirst?: boolean
  /** When an entry is due, if not `interval` after it was tracked; such an entry does not count toward `batch`. */
  due?(entry: E): number | undefined
  /** Whether anything may be sent now (the tracker's consent). */
  allowed?(): boolean
  counts: { sent: number; retried: number }
  /** Reports entries given up; the engine gives up only what is too large or refused. */
  drop(entries: E[], reason: 'too_large' | 'rejected', detail?: string): void
}

/**
 * Sends the entries of `store` through `transport`: a request when `batch` entries wait or the
 * oldest has waited `interval`, at most `most` in flight, under one backoff for the whole sender
 * (shared/http.ts): after a failure one request at a time, a probe, with a growing wait between
 * them, then up to `most` again once one is answered. 2xx removes a request's entries, another
 * 4xx but 408 and 429 drops them as `rejected`, anything else keeps them for after the backoff.
 */
export function createEngine<E extends Queued, R extends Request<E>>(store: Store<E>, transport: Transport<E, R>) {
  const { most, interval, counts } = transport
  const batch = transport.batch || Infinity
  const backoff = createBackoff(transport.probeFirst)
  const inFlight = new Set<R>()
  let timer: ReturnType<typeof setTimeout> | undefined
  let due = Infinity
  // Set by flush(): everything waiting goes, a request after each answer, until none waits.
  let hurry = false
  const flushing: (() => void)[] = []

  /** Ends every flush(): nothing is left to send, or a failure now waits out the backoff. */
  const endFlush = () => {
    hurry = false
    flushing.splice(0).forEach((resolve) => resolve())
  }

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

  // `interval` after the entry was tracked; a clock set back meanwhile must not hold it longer.
  const afterInterval = (entry: E, now: number) => Math.min(entry.event.t_client, now) + interval

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
      at = Math.min(at, own ?? afterInterval(entry, now))
    }
    schedule(fresh >= batch ? 0 : at)
  }

  /** Marks what a request carries or asks about as sending, or no longer. */
  const mark = (request: R, sending: boolean) => request.entries.concat(request.checks || []).forEach((entry) => (entry.sending = sending))

  /** POSTs one request and settles its entries by the answer. */
  const start = (request: R) => {
    inFlight.add(request)
    mark(request, true)
    const step = backoff.step()
    transport.post(request).then((answer) => {
      // Forgotten meanwhile (forget(), or given up by the product): it is settled already.
      if (inFlight.delete(request)) settle(request, answer, step)
    })
  }

  const settle = (request: R, answer: Answer, step: number) => {
    const { entries } = request
    mark(request, false)
    const outcome = outcomeOf(answer.status)
    if (outcome == 'retry') {
      backoff.failed(step, answer.retryAfter)
      counts.retried += (transport.retry?.(request, answer) || entries).length
      endFlush()
      if (store.entries.length) schedule(backoff.resumeAt())
      return
    }
    // Refused, but answered: the collector is up.
    backoff.answered()
    store.remove(entries)
    if (outcome == 'delivered') counts.sent += entries.length
    else if (entries.length) transport.drop(entries, 'rejected', 'the collector answered ' + answer.status + (answer.message ? ': ' + answer.message : ''))
    transport.answered?.(request, answer, outcome)
    if (hurry) send()
    else plan()
  }

  /** Sends what waits now, as many requests as there are free slots. */
  function send() {
    stop()
    if (transport.allowed && !transport.allowed()) return endFlush()
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
      free
    )
    // Nothing to send: a flush() ends once the requests in flight were answered too.
    if (!requests.length && !inFlight.size) endFlush()
    requests.forEach(start)
    plan()
  }

  return {
    backoff,
    /** The requests in flight; cleared when they may never answer (a page back from the back/forward cache, a sender closed). */
    inFlight,
    send,
    start,
    stop,
    endFlush,
    /**
     * An entry was added to the end of the store: a full batch leaves now, anything less when
     * due. Only then is the store walked; else only the new entry can make a send due sooner.
     */
    queued() {
      const { entries } = store
      plan(entries.length < batch ? entries.slice(-1) : entries)
    },
    /** An entry too large for any request: removed and dropped. */
    tooLarge(entry: E) {
      store.remove([entry])
      transport.drop([entry], 'too_large')
    },
    /** Sends everything waiting now; resolves once none waits and none is in flight, or a request failed. */
    flush(): Promise<void> {
      hurry = true
      const flushed = new Promise<void>((resolve) => flushing.push(resolve))
      send()
      return flushed
    }
  }
}

export type Engine<E extends Queued, R extends Request<E>> = ReturnType<typeof createEngine<E, R>>
