import type { ClaimState, DeliveryStore } from './types'

/**
 * Which event ids were delivered, in this process's memory: for one instance, with nothing to
 * install. It remembers the last `max` delivered ids (about 120 B each) and forgets the oldest
 * first, so a resend of an older event reaches the sink again. Node runs one handler at a time,
 * so a claim is checked and taken at once.
 */
export function memoryStore({ max = 200000 }: { max?: number } = {}): DeliveryStore & { remember(ids: string[]): void } {
  const delivered = new Set<string>()
  // Claims of requests whose sink is running: the request's token and when the claim lapses.
  const claims = new Map<string, { token: string; until: number }>()

  const remember = (ids: string[]) => {
    for (const id of ids) {
      claims.delete(id)
      // Deleted first, so that a re-delivered id counts as the newest.
      delivered.delete(id)
      delivered.add(id)
      if (delivered.size > max) delivered.delete(delivered.values().next().value!)
    }
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
    async delivered(ids) {
      remember(ids)
    },
    async release(ids, token) {
      for (const id of ids) if (claims.get(id)?.token == token) claims.delete(id)
    },
    async lookup(ids) {
      return ids.map((id) => delivered.has(id))
    },
    /** Marks ids as delivered without a request: what a sink already holds when the process starts. */
    remember
  }
}
