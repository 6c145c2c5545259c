import { deliveryIds, ownerOf, rememberedIds } from './dedupe'
import { takeTokens, type Bucket } from './token-bucket'
import type { ClaimState, DeliveryStore, RateLimit, RelayEvent } from './types'

// Buckets of this many clients at most are kept; beyond, the one used longest ago goes (it has
// refilled by then in all likelihood).
const MAX_BUCKETS = 100000

/**
 * Which event ids were delivered, in this process's memory: for one instance, with nothing to
 * install. It remembers the last `max` delivered ids (about 150 B each) and forgets the oldest
 * first, so a resend of an older event reaches the sink again: the relay's rate limit keeps one
 * client from pushing others' ids out (docs/guide/relay.md "What an attacker can still cost"). Node runs one
 * handler at a time, so a claim is checked and taken at once.
 * @param options - `max`: how many delivered ids to remember, 200,000 by default.
 */
export function memoryStore(options: { max?: number } = {}): DeliveryStore & { remember(events: RelayEvent[]): void } {
  const { max = 200000 } = options
  // Each delivered id and its owner ('' for none).
  const delivered = new Map<string, string>()
  // Claims of requests whose sink is running: the request's token and when the claim lapses.
  const claims = new Map<string, { token: string; until: number }>()
  const buckets = new Map<string, Bucket>()

  const markDelivered = (ids: string[], owners: string[] = []) => {
    ids.forEach((id, index) => {
      claims.delete(id)
      // Deleted first, so that a re-delivered id counts as the newest.
      delivered.delete(id)
      delivered.set(id, owners[index] || '')
      if (delivered.size > max) delivered.delete(delivered.keys().next().value!)
    })
  }

  return {
    async claim(ids, token, ttlMs) {
      const now = Date.now()
      return ids.map((id): ClaimState => {
        if (delivered.has(id)) return 'delivered'
        const held = claims.get(id)
        if (held && held.until > now) return 'claimed'
        claims.set(id, { token, until: now + ttlMs })
        return 'new'
      })
    },
    async delivered(ids, _token, owners) {
      markDelivered(ids, owners)
    },
    async release(ids, token) {
      for (const id of ids) if (claims.get(id)?.token == token) claims.delete(id)
    },
    async lookup(ids) {
      return ids.map((id) => delivered.get(id) ?? null)
    },
    async take(name: string, cost: number, limit: RateLimit) {
      const now = Date.now()
      const [bucket, waitMs] = takeTokens(buckets.get(name), cost, limit, now)
      // Set again, so that the map's order is the order of use.
      buckets.delete(name)
      buckets.set(name, bucket)
      if (buckets.size > MAX_BUCKETS) buckets.delete(buckets.keys().next().value!)
      return waitMs
    },
    /** Marks events as delivered without a request: what a sink already holds when the process starts. */
    remember(events) {
      for (const event of events) {
        if (!event.event_id) continue
        const owner = ownerOf(event.user.uid)
        // What the relay marked when it delivered the event, the order as reported included.
        const ids = rememberedIds(deliveryIds(event, owner, !!event.from_server), true)
        markDelivered(
          ids,
          ids.map(() => owner)
        )
      }
    }
  }
}
