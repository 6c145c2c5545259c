import type { Claims } from './claims'
import { sinkTimer, type Metrics } from './metrics'
import { CLAIMED_RETRY_SECONDS, failure, json } from './responses'
import { SinkUnavailable } from './sink-unavailable'
import type { RelayEvent, Sink } from './types'

/**
 * Makes the function that hands a request's fresh events to `sink`, timed into `metrics`; the
 * sink's failures reach `report` (the relay's onError).
 */
export function sinkDelivery(sink: Sink, metrics: Metrics, report: (error: unknown) => void) {
  /**
   * Hands the fresh events to the sink. When it fails, what it got through counts as delivered
   * and the rest is let go for the resend; the answer is then 503 with Retry-After.
   */
  return async function deliver(claims: Claims, headers: Record<string, string>): Promise<Response | undefined> {
    const fresh = claims.fresh
    if (!fresh.length) return
    const timer = sinkTimer(metrics)
    try {
      await sink(fresh)
      timer(true)
    } catch (error) {
      timer(false)
      metrics.unavailable('sink')
      // Known by its object, or by its event id where a sink reports copies.
      const through = new Set<unknown>(error instanceof SinkUnavailable ? error.delivered.flatMap((event) => [event, event.event_id].filter(Boolean)) : [])
      const got = (event: RelayEvent) => through.has(event) || (!!event.event_id && through.has(event.event_id))
      await claims.delivered(fresh.filter(got)).catch(report)
      await claims.release(fresh.filter((event) => !got(event))).catch(report)
      report(error)
      const wait = error instanceof SinkUnavailable ? Math.ceil(error.retryAfterMs / 1000) : CLAIMED_RETRY_SECONDS
      return json(503, failure('the sink is unavailable'), { ...headers, 'retry-after': String(Math.max(1, wait)) })
    }
    // Delivered: the sink has them, whatever the store says next. A store that fails here is
    // a window docs/guide/relay.md names ("What each failure costs"): the ids are not marked, and
    // a resend would reach the sink again.
    await claims.delivered(fresh).catch(report)
  }
}
