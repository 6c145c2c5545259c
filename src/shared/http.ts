/*
 * How both senders, the page's delivery and the server sender, read a collector's answers and
 * pace their requests: one policy, so that a collector sees the same behaviour from either.
 */

/** What an answer means for the events a request carried: stored, rejected for good, or to try again. */
export type Verdict = 'delivered' | 'rejected' | 'retry'

/**
 * 2xx: stored. Another 4xx, except 408 (timeout) and 429 (too many requests), can never
 * succeed: that batch is rejected, and given up. Anything else, no answer (status 0) included,
 * may succeed later and is tried again.
 */
export function verdictOf(status: number): Verdict {
  if (status >= 200 && status < 300) return 'delivered'
  if (status >= 400 && status < 500 && status != 408 && status != 429) return 'rejected'
  return 'retry'
}

/**
 * The collector URL with the send time, now, as `t_sent`, for a request about to go: a collector
 * corrects a device clock that is off by its own receive time minus t_sent
 * (docs/reference/collector-protocol.md). A query parameter keeps the body SPEC's.
 */
export const withSendTime = (endpoint: string) => withParameter(endpoint, 't_sent=' + Date.now())

/** The collector's own words in an error answer's parsed body, SPEC's error shape ("Errors": `{ error: { message } }`); undefined for any other. */
export function errorMessageIn(json: unknown): string | undefined {
  const message = (json as { error?: { message?: unknown } } | null | undefined)?.error?.message
  return typeof message == 'string' ? message : undefined
}

/** The collector's own words in an error answer's body, as errorMessageIn reads them; undefined for a body that is not JSON. */
export function errorMessageOf(body: string): string | undefined {
  try {
    return errorMessageIn(JSON.parse(body))
  } catch {
    return undefined
  }
}

/** `url` with one more query parameter (`name=value`, its value encoded already), after a `?` or an `&` as the URL needs. */
export const withParameter = (url: string, parameter: string) => url + (url.includes('?') ? '&' : '?') + parameter

/** Milliseconds a Retry-After header asks for, in seconds or as an HTTP date; NaN without a usable one. */
export function retryAfterMs(header: string | null | undefined, now: number): number {
  if (!header) return NaN
  const seconds = Number(header)
  const ms = isNaN(seconds) ? Date.parse(header) - now : seconds * 1000
  return ms >= 0 ? ms : NaN
}

const FIRST_STEP = 1000
const LAST_STEP = 60000

/**
 * One backoff for all of a sender's requests. A sender sends most when the shop is busiest,
 * which is when the collector may struggle: every request waits out the same step, and the
 * requests of one step that fail together count as one failure, not one each.
 *
 * After a failure the sender probes: one request at a time until one succeeds, so a collector
 * that struggles sees at most one request per step; then up to the sender's bound again
 * (`slots`). `probeFirst`: the sender starts that way too, before anything is known.
 */
export function createBackoff(probeFirst?: boolean) {
  let failures = 0
  let resumeAt = 0
  let healthy = !probeFirst
  return {
    /** The step a request starts in, to hand back to `failed`. */
    step: () => failures,
    /** No request starts before this (ms since epoch). */
    resumeAt: () => resumeAt,
    /** How many requests may be in flight: `most` once the collector answers, one while probing. */
    slots: (most: number) => (healthy ? most : 1),
    /** Whether requests go one at a time, as probes, until one is answered. */
    probing: () => !healthy,
    /** An answer that no retry follows: delivered, or refused by a collector that is up. */
    answered() {
      failures = 0
      healthy = true
    },
    /**
     * A retryable failure of a request that started in `step`: the collector's Retry-After
     * when it gives one, else exponential from 1 s to 60 s with jitter (half to all of the step).
     */
    failed(step: number, retryAfter: string | null | undefined) {
      if (failures == step) failures++
      healthy = false
      const now = Date.now()
      const asked = retryAfterMs(retryAfter, now)
      // A request that started before the count was reset (back online, a success meanwhile)
      // still waits at least the first step.
      const exponent = Math.max(failures, 1) - 1
      const wait = asked >= 0 ? asked : Math.min(FIRST_STEP * 2 ** exponent, LAST_STEP) * (0.5 + Math.random() / 2)
      resumeAt = Math.max(resumeAt, now + wait)
    },
    /** Something changed that lets requests go now (back online, consent given): the wait is forgotten. */
    reset() {
      failures = 0
      resumeAt = 0
    }
  }
}

export type Backoff = ReturnType<typeof createBackoff>
