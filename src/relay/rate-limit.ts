import { failure, json } from './responses'
import type { DeliveryStore, RateLimit } from './types'

// Per client address: a tracker's whole outbox (2,000 events) at once, then 10 events a second.
// A page answered 429 keeps its events and sends them after Retry-After: a shop behind one
// address with many shoppers (an office, a carrier's NAT) is slowed, never loses an event.
const RATE_LIMIT = { burst: 2000, perSecond: 10 }

/**
 * The rate limit of the client addresses, in the store's buckets (a store without `take`
 * limits nothing). It answers a request that must wait 429 with Retry-After, and lets the
 * others through.
 */
export function rateLimiter(store: DeliveryStore, limit: RateLimit | false = RATE_LIMIT, keys = 1) {
  /**
   * Seconds a page's address must wait before this request is taken, or 0. Each event costs a
   * token, and so does each 50 ids asked about under each of the relay's keys (a question is
   * store reads too: one per id, key and asking shopper, unconfirmed.ts); a request costs one at
   * least, so that empty ones are counted as well.
   */
  async function waitSeconds(client: string | undefined, envelopes: number, query: URLSearchParams): Promise<number> {
    if (!limit || !store.take || !client) return 0
    const question = query.get('unconfirmed')
    const asked = question ? question.split(',').length : 0
    const waitMs = await store.take(client, Math.max(1, envelopes) + Math.ceil((asked * keys) / 50), limit)
    return waitMs > 0 ? Math.max(1, Math.ceil(waitMs / 1000)) : 0
  }

  /** The 429 answer for a client that must wait, or undefined when the request may go on. */
  return async (client: string | undefined, envelopes: number, query: URLSearchParams, headers: Record<string, string>): Promise<Response | undefined> => {
    const seconds = await waitSeconds(client, envelopes, query)
    if (seconds) return json(429, failure('too many events from this address: come back in ' + seconds + ' s'), { ...headers, 'retry-after': String(seconds) })
  }
}
