import { failure, json } from './responses'
import type { DeliveryStore, RateLimit } from './types'

// Per client address: a tracker's whole outbox (2,000 events) at once, then 10 events a second.
// A page answered 429 keeps its events and sends them after Retry-After: a shop behind one
// address with many shoppers (an office, a carrier's NAT) is slowed, never loses an event.
const RATE_LIMIT = { burst: 2000, perSecond: 10 }

// A token buys an event or a KiB of the request, whichever a request has more of: the tracker's
// envelopes are 300 B to 1 KiB, so its batches cost what their events do, while one envelope of
// 255 KiB costs what 255 events do (it is read, parsed and, refused, kept as a dead letter).
export const BYTES_PER_TOKEN = 1024

/**
 * The bucket of every request that shows no client address (a Web handler given no
 * `remoteAddress`, an `ipHeader` holding no address): they share it, so that the limit holds
 * whatever the platform tells. It cannot be a client's: those are addresses, or IPv6 /64s.
 */
export const NO_ADDRESS = 'unknown'

const NO_ADDRESS_WARNING =
  'discovery-feedback: relay: a request showed no client address (relay.fetch was given no remoteAddress, or the ipHeader held no address), ' +
  'so requests without one share one rate-limit bucket: give relay.fetch the peer address ({ remoteAddress }), or set ipHeader or trustProxy ' +
  '(docs/guide/relay.md, "The shopper\'s address")'

/** The tokens `bytes` of a request cost. */
const tokensOf = (bytes: number) => Math.ceil(bytes / BYTES_PER_TOKEN)

/**
 * The rate limit of the client addresses, in the store's buckets (a store without `take`
 * limits nothing). A request pays twice: before its body is read, for the bytes it declares
 * (Content-Length; one token at least), so that a client over its limit is refused before
 * anything of its body is held; once read, for what else it costs. It answers a request that
 * must wait 429 with Retry-After, and lets the others through. `warn` hears, once, that
 * requests come without a client address.
 */
export function rateLimiter(store: DeliveryStore, limit: RateLimit | false = RATE_LIMIT, keys = 1, warn: (error: Error) => void = () => {}) {
  const limited = !!limit && !!store.take
  let warned = false

  /** The 429 answer for a client that must wait `waitMs`, or undefined when it need not. */
  async function take(client: string, cost: number, headers: Record<string, string>): Promise<Response | undefined> {
    const waitMs = cost > 0 ? await store.take!(client, cost, limit as RateLimit) : 0
    if (waitMs <= 0) return
    const seconds = Math.max(1, Math.ceil(waitMs / 1000))
    return json(429, failure('too many events from this address: come back in ' + seconds + ' s'), { ...headers, 'retry-after': String(seconds) })
  }

  return {
    /** The bucket a page's request counts against: its client's, or the one of those without an address (warned of once). */
    bucketOf(client: string | undefined): string {
      if (client) return client
      if (!warned && limited) {
        warned = true
        const warning = new Error(NO_ADDRESS_WARNING)
        warning.name = 'RelayWarning'
        warn(warning)
      }
      return NO_ADDRESS
    },

    /**
     * Before the body is read: takes the tokens of the bytes it declares, at most `maxBytes`,
     * one at least. Resolves the tokens taken, or the 429 answer.
     */
    async beforeBody(client: string, declaredBytes: number, maxBytes: number, headers: Record<string, string>): Promise<number | Response> {
      if (!limited) return 0
      const cost = Math.max(1, tokensOf(Math.min(maxBytes, Number.isFinite(declaredBytes) ? declaredBytes : 0)))
      return (await take(client, cost, headers)) || cost
    },

    /**
     * Once the body is read: takes what the request costs beyond the `paid` tokens. Each event
     * costs a token, or each KiB of the body where that is more, and so do each 50 ids asked
     * about under each of the relay's keys (a question is store reads too: one per id, key and
     * asking shopper, unconfirmed.ts). Resolves the 429 answer, or undefined.
     */
    async afterBody(client: string, paid: number, envelopes: number, bytes: number, query: URLSearchParams, headers: Record<string, string>) {
      if (!limited) return
      const question = query.get('unconfirmed')
      const asked = question ? question.split(',').length : 0
      const cost = Math.max(1, envelopes, tokensOf(bytes)) + Math.ceil((asked * keys) / 50)
      return take(client, cost - paid, headers)
    }
  }
}

export type RateLimiter = ReturnType<typeof rateLimiter>
