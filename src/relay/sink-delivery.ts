import type { Claims } from './claims'
import { sinkTimer, type Metrics } from './metrics'
import { NO_ADDRESS } from './rate-limit'
import { CLAIMED_RETRY_SECONDS, failure, json } from './responses'
import { SinkRefusal, type RefusedEvent } from './sink-refusal'
import { SinkUnavailable } from './sink-unavailable'
import { writeWithRetries } from './store-retries'
import type { RelayEvent, Sink } from './types'

/** Of `fresh`, those `named` (a sink's report): known by their object, or by their event id where a sink reports copies. */
function namedIn(fresh: RelayEvent[], named: RelayEvent[]) {
  const known = new Set<unknown>(named.flatMap((event) => [event, event.event_id].filter(Boolean)))
  return (event: RelayEvent) => known.has(event) || (!!event.event_id && known.has(event.event_id))
}

/**
 * Whose share of the sink a request's events take: its address's. Requests that show no address
 * share one rate-limit bucket (rate-limit.ts), but not one share of the sink: there, each
 * shopper's events (the request's first uid) are served in turn, so that one shopper's burst does
 * not hold everyone's back.
 */
const shareOf = (client: string | undefined, fresh: RelayEvent[]) => (client == NO_ADDRESS ? NO_ADDRESS + ' ' + fresh[0].user.uid : client)

/**
 * Makes the function that hands a request's fresh events to `sink`, timed into `metrics`; the
 * sink's failures reach `report` (the relay's onError). What it writes to the store afterwards
 * is tried again for up to `claimMs` while the store fails (store-retries.ts).
 */
export function sinkDelivery(sink: Sink, metrics: Metrics, report: (error: unknown) => void, claimMs: number) {
  /** After a SinkRefusal: the refused events let go, the rest delivered; resolves the refused ones, as the request's events, with their errors. */
  async function refusedOf(claims: Claims, refusal: SinkRefusal): Promise<RefusedEvent[]> {
    const refused: RefusedEvent[] = []
    for (const event of claims.fresh) {
      const found = refusal.refused.find(({ event: named }) => namedIn([event], [named])(event))
      if (found) refused.push({ event, error: found.error })
    }
    const isRefused = new Set(refused.map(({ event }) => event))
    await writeWithRetries(() => claims.delivered(claims.fresh.filter((event) => !isRefused.has(event))), claimMs, report)
    await writeWithRetries(() => claims.release([...isRefused]), claimMs, report)
    return refused
  }

  /**
   * Hands the fresh events of the client `client` to the sink: resolves the events it refused
   * for good (SinkRefusal), none when it took them all. When it fails, what it got through counts
   * as delivered and the rest is let go for the resend; the answer is then 503 with Retry-After.
   */
  return async function deliver(claims: Claims, headers: Record<string, string>, client?: string): Promise<Response | RefusedEvent[]> {
    const fresh = claims.fresh
    if (!fresh.length) return []
    const timer = sinkTimer(metrics)
    try {
      await sink(fresh, { client: shareOf(client, fresh) })
      timer(true)
    } catch (error) {
      if (error instanceof SinkRefusal) {
        timer(true)
        return refusedOf(claims, error)
      }
      timer(false)
      metrics.unavailable('sink')
      const got = namedIn(fresh, error instanceof SinkUnavailable ? error.delivered : [])
      await writeWithRetries(() => claims.delivered(fresh.filter(got)), claimMs, report)
      await writeWithRetries(() => claims.release(fresh.filter((event) => !got(event))), claimMs, report)
      report(error)
      const wait = error instanceof SinkUnavailable ? Math.ceil(error.retryAfterMs / 1000) : CLAIMED_RETRY_SECONDS
      return json(503, failure('the sink is unavailable'), { ...headers, 'retry-after': String(Math.max(1, wait)) })
    }
    // Delivered: the sink has them, whatever the store says next. A store that fails here is
    // a window docs/guide/relay.md names ("What each failure costs"): until the mark is written,
    // a resend is held by the claims, and reaches the sink again once they lapse.
    await writeWithRetries(() => claims.delivered(fresh), claimMs, report)
    return []
  }
}
