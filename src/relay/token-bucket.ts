import type { RateLimit } from './types'

/** A client's bucket: the tokens it holds, as of `at` (ms since epoch). */
export interface Bucket {
  tokens: number
  at: number
}

/**
 * A token bucket (the rule the Redis store runs as a script too): a client holds up to `burst`
 * tokens, gets `perSecond` back each second, and each event costs one. Returns the bucket after
 * the take and 0 when there were tokens enough, or the bucket unchanged and the milliseconds
 * until there would be. A take larger than the whole bucket waits for a full one and takes that.
 */
export function takeTokens(bucket: Bucket | undefined, cost: number, { burst, perSecond }: RateLimit, now: number): [Bucket, number] {
  const held = bucket ? Math.min(burst, bucket.tokens + ((now - bucket.at) / 1000) * perSecond) : burst
  const needed = Math.min(cost, burst)
  if (held >= needed) return [{ tokens: held - needed, at: now }, 0]
  return [{ tokens: held, at: now }, Math.ceil(((needed - held) / perSecond) * 1000)]
}
