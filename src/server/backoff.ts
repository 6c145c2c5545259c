/**
 * The one backoff of a sender. The shop sends most when it is busiest, which is when the
 * collector may struggle: all requests wait out the same step, so a collector that says
 * "back off" hears a handful of requests per step instead of one per batch, and the requests
 * of one step fail together and count as one failure, not four.
 */
export function createBackoff() {
  let failures = 0
  let resumeAt = 0
  return {
    /** The step a request starts in, to be handed back to `failed`. */
    step: () => failures,
    /** No request starts before this (ms since epoch). */
    resumeAt: () => resumeAt,
    succeeded() {
      failures = 0
    },
    /**
     * A retryable failure of a request that started in `step`: Retry-After when the collector
     * gives it, else exponential from 1 s to 60 s with jitter (half to all of the step).
     */
    failed(step: number, retryAfter: string | null) {
      if (failures == step) failures++
      const seconds = retryAfter ? Number(retryAfter) : NaN
      const asked = retryAfter && isNaN(seconds) ? Date.parse(retryAfter) - Date.now() : seconds * 1000
      const wait = asked >= 0 ? asked : Math.min(1000 * 2 ** (failures - 1), 60000) * (0.5 + Math.random() / 2)
      resumeAt = Math.max(resumeAt, Date.now() + wait)
    }
  }
}
