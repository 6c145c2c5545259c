// The engine's types (engine.ts): what a product passes in, and the words both share.
import type { Body, Packed } from './batch'
import type { Verdict } from './http'
import type { Answer } from './post'

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

/** What the engine gives up by itself: an entry too large for any request, or one the collector rejected. */
export type EngineDropReason = Extract<DropReason, 'too_large' | 'rejected'>

/** An entry of the engine: an event with its time of tracking, and whether a request carries it. */
export interface Queued extends Packed<{ t_client: number }> {
  sending?: boolean
}

/**
 * One POST: its body and the entries it carries; any entries whose delivery it only asks about
 * (`checks`, docs/reference/collector-protocol.md), which the product settles itself; and the
 * bytes of the browser's keepalive budget it holds (`held`, shared/keepalive.ts), if any.
 */
export type EngineRequest<E extends Queued> = Body<E> & { checks?: E[]; held?: number }

/** Where entries wait, in order: the engine reads them and removes those that are settled. */
export interface Store<E extends Queued> {
  readonly entries: E[]
  remove(entries: E[]): void
}

/**
 * What a product gives the engine besides its store: how it makes and posts its requests, what
 * it adds to settling them, and its pace.
 */
export interface Transport<E extends Queued, R extends EngineRequest<E>> {
  /** The requests for entries that wait (`waiting`, oldest first), at most `most`; an entry too large for any request goes to `oversized`. */
  take(waiting: E[], most: number, oversized: (entry: E) => void): R[]
  /** POSTs one request; resolves the answer, status 0 for none. */
  post(request: R): Promise<Answer>
  /** After a delivered or rejected request was settled. */
  answered?(request: R, answer: Answer, verdict: Verdict): void
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
  /** Hears the entries the engine gave up: too large for any request, or rejected by the collector, with its own words where the answer's body gave them (`said`). */
  drop?(entries: E[], reason: EngineDropReason, detail?: string, said?: string): void
}

/** The engine's counts, as the products' `stats()` show them. */
export interface SendCounts {
  /** Events answered 2xx, or handed over as the page went. */
  sent: number
  /** Events of failed requests that will be tried again. */
  retried: number
}
