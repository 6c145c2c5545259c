// Public types of the first-party relay (`discovery-feedback/relay`).
import type { Envelope } from '../shared/types'

/** An accepted event as the relay hands it to a sink: SPEC's envelope, checked, with the relay's two times. */
export type RelayEvent = Envelope & {
  /** When the relay received it (epoch ms). */
  received_at: number
  /** `t_client` moved by the gap between the sender's clock and the relay's (`?t_sent=`). */
  t_corrected: number
  /** Sent by the shop's own server sender (`serverSecrets`): the only sender whose `user.ip` and `user.ua` are its own word. */
  from_server?: true
  /** A purchase of an order another shopper reported first, or the server sender named another shopper for: every copy is kept, for the shop to settle (docs/guide/relay.md "What each sender can prove"). */
  order_conflict?: true
  /** Its user agent is a known bot's, crawler's or headless browser's (isbot): with `bots: 'keep'` any event, with `'drop'` only a purchase, which is never dropped. */
  bot?: true
}

/**
 * Where accepted events go. It resolves once they are safe; a rejection makes the relay answer
 * 503, so the sender keeps them, except a `SinkRefusal`, whose refused events are answered as
 * rejected and the rest as taken. `from` says whose request the events came in.
 */
export type Sink<T = RelayEvent> = (events: T[], from?: SinkSource) => Promise<void>

/** Whose request a sink's events came in, for a sink that shares its capacity fairly (forwardSink). */
export interface SinkSource {
  /** The client's address as the rate limit counts it (`trustProxy`, `ipHeader`); undefined for the shop's server sender. */
  client?: string
}

/** An envelope the relay refused, as the dead-letter sink gets it: for the shop to see, and to replay once fixed. */
export interface DeadLetter {
  /** Why, as the sender was answered: the rule and the field, or the key's error. */
  error: string
  /** The key it came with: its own, else the request's (`?key=`, `X-Key`); '' for none. */
  key: string
  /** When the relay received and refused it (epoch ms). */
  refused_at: number
  /**
   * The envelope as it came, but for the shopper's personal data: its `user.email`, `user.ip`
   * and `user.ua` are kept as the kind of value they were (`'(removed: text of 23 characters)'`),
   * never as the value. One whose JSON is over 2 KiB is cut short: texts to 256 characters,
   * arrays and objects where 2 KiB end, with how many more entries there were.
   */
  envelope: unknown
  /** Set when `envelope` was cut short. */
  truncated?: true
}

/** Where refused envelopes go: `fileSink(path)`, `forwardSink({ format: 'batch', … })`, or the shop's own function. */
export type DeadLetterSink = (letters: DeadLetter[]) => Promise<void> | void

/** What a claim on an event id found. */
export type ClaimState = 'new' | 'delivered' | 'claimed'

/**
 * Which event ids reached the sink, shared by every instance of the relay. A request claims its
 * ids before its sink runs, so that two instances given the same event never both hand it over.
 */
export interface DeliveryStore {
  /**
   * Claims `ids` for the request `token`: 'new' ones are its to deliver now; 'delivered' ones reached the sink before; 'claimed' ones are another request's now.
   * @param ids - The request's event ids.
   * @param token - The request's own token.
   * @param ttlMs - How long a claim holds should the request never settle it.
   */
  claim(ids: string[], token: string, ttlMs: number): Promise<ClaimState[]>
  /**
   * The request's claimed ids reached the sink; `owners[i]`, if given, is the shopper `ids[i]` belongs to (for `?unconfirmed=`).
   * @param ids - The ids that reached the sink.
   * @param token - The request's token.
   * @param owners - The shopper each id belongs to, by the same index.
   */
  delivered(ids: string[], token: string, owners?: string[]): Promise<void>
  /**
   * The sink failed: the request lets its claims go, so that a retry can take them.
   * @param ids - The ids the request claimed.
   * @param token - The request's token.
   */
  release(ids: string[], token: string): Promise<void>
  /**
   * For each id, the owner it reached the sink with ('' for none), or null when it did not (the `?unconfirmed=` question).
   * @param ids - The event ids asked about.
   */
  lookup(ids: string[]): Promise<(string | null)[]>
  /**
   * Takes `cost` tokens from the bucket `name` (a client's) under `limit`, for every instance at
   * once: resolves 0 when taken, else the milliseconds until there are tokens enough. A store
   * without it sets no rate limit.
   * @param name - The bucket, one per client.
   * @param cost - The events of the request.
   * @param limit - The bucket's size and refill.
   */
  take?(name: string, cost: number, limit: RateLimit): Promise<number>
}

/** A token bucket per client: up to `burst` events at once, `perSecond` more each second. */
export interface RateLimit {
  burst: number
  perSecond: number
}

/** A purchase's field that two copies of an order are compared by. */
export type PurchaseField = 'currency' | 'revenue' | 'total_tax' | 'total_shipping' | 'total_discount' | 'line_items'

/**
 * A copy of a purchase's part in its order's coverage (docs/guide/order-webhooks.md): each order
 * counts once when its first copy reaches the sink, by who sent it, and once more when the other
 * reporter's copy comes.
 */
export interface OrderReport {
  /** The copy: stored now, or a duplicate of the first. */
  event: RelayEvent
  /** Who sent it: a browser (page, pixel, GA4 bridge) or the shop's server sender (the order webhooks). */
  reporter: 'browser' | 'server'
  /** `'first'`: no copy of the order had reached the sink before; `'second'`: the other reporter's had. */
  order: 'first' | 'second'
  /** Where this copy differs from the first, which is the one that counts: a zero discount left out, a rounding (the same shopper's copies only). */
  differences: PurchaseField[]
}

/** What the relay did with one batch, for an inspector or the shop's monitoring. */
export interface BatchReport {
  /** Stored now. */
  accepted: RelayEvent[]
  /** Stored before (their event id was delivered already). */
  duplicates: RelayEvent[]
  /** Refused by the rules or the keys: `index` in the batch, the error, and the envelope as it came. */
  rejected: { index: number; error: string; envelope: unknown }[]
  /** Sent by a known bot (`bots`): those dropped (with `'drop'`, all but purchases) reached no sink; those kept are among `accepted` too, marked `bot`. */
  bots: RelayEvent[]
  /** Accepted events that named no `variant_item_id` (the service's own clients send none), given their `item_id` as the variant. */
  variantsFilled: number
  /** The send time the client gave (`?t_sent=`), if it is a time. */
  sentAt: number | undefined
  /** The purchases of the batch that count in their orders' coverage: a first copy, or the other reporter's after it. */
  orders: OrderReport[]
}

/** The options of `createRelay()`. */
export interface RelayOptions {
  /** The API keys whose events the relay takes. Required. */
  keys: string[]
  /** Where accepted events go: `forwardSink(…)`, `fileSink(…)`, or the shop's own function. Required. */
  sink: Sink
  /** Which event ids were delivered: `memoryStore()` (default, one process) or `redisStore(client)` (several). */
  store?: DeliveryStore
  /** Origins whose pages may post across origins (CORS), such as the shop's other hosts, `'null'` for Shopify pixels, or `'*'`. Default: none, the relay's own origin only. */
  origins?: string[] | '*'
  /**
   * Proxies in front of the relay whose forwarding headers it believes: how many there are (a
   * CDN and a load balancer: 2), or their address ranges (`['10.0.0.0/8', '2001:db8::/32']`).
   * Default 0: the connection's peer is the shopper, and forwarding headers are ignored.
   */
  trustProxy?: number | string[]
  /** Which header the trusted proxies write: `'x-forwarded-for'` (default) or `'forwarded'` (RFC 7239). The other is not read: a shopper can send either. */
  proxyHeader?: 'x-forwarded-for' | 'forwarded'
  /**
   * Secrets of the shop's own server senders (`createServerTracker({ secret })`), each of at least
   * 16 printable ASCII characters without spaces; several, so that one can be rotated. A request with
   * `Authorization: Bearer <secret>` may give the shopper's `user.ip` and `user.ua` in its events
   * (SPEC "User object", for calls not made from the shopper's browser), and its purchase is
   * the order's word; from any other request they are the connection's, whatever its body says.
   * A server sender without one of them (its agent, or a wrong bearer token) is answered 401,
   * and nothing of its request is stored. Default: none.
   */
  serverSecrets?: string[]
  /** A header the platform sets on every request with the client's address (`'cf-connecting-ip'`, `'x-real-ip'` on Vercel); it wins over everything else where present. */
  ipHeader?: string
  /** `'full'` (default), `'truncate'` (IPv4 to /24, IPv6 to /48) or `'drop'`. */
  ip?: 'full' | 'truncate' | 'drop'
  /** The uid cookie the relay renews on its answers, with the storefront tracker's attributes; `false` for none. */
  cookie?: false | { domain?: string; secure?: boolean; days?: number }
  /**
   * Events a client address may send (a token bucket in the store, shared by every instance):
   * `burst` at once, `perSecond` more each second; beyond, 429 with Retry-After, and the tracker
   * sends them later. A request costs a token for each event, or for each KiB of its body where
   * that is more, paid for the bytes it declares before its body is read. Requests that show no
   * client address share one bucket, and the relay warns of them once. The shop's server
   * senders are not limited. Default `{ burst: 2000, perSecond: 10 }`; `false` for none. A store
   * without `take` limits nothing.
   */
  rateLimit?: RateLimit | false
  /** Largest request body in bytes. Default 262144 (256 KiB). */
  maxBodyBytes?: number
  /**
   * Milliseconds a request's body may take to arrive whole; a slower one is answered 408 and
   * given up. Default 10,000. A client address may have 32 bodies arriving at once; a request
   * beyond is answered 429 unread.
   */
  bodyTimeoutMs?: number
  /** Milliseconds a claim on an event id holds while its sink runs; an instance that dies mid-batch frees its events after this. Keep it above the sink's longest call (forwardSink: two timeouts, 20 s). Default 30,000. */
  claimMs?: number
  /**
   * Where refused envelopes go, each with its error, its key and when it came: `fileSink(path)`,
   * `forwardSink({ format: 'batch', … })` or a function. The page's answer never waits for it:
   * at most 16 calls are in flight, and refused envelopes beyond are dropped and counted
   * (`df_relay_dead_letters_total`). Default: none.
   */
  deadLetter?: DeadLetterSink
  /**
   * Events whose user agent is a known bot's, crawler's or headless browser's (isbot's list):
   * `'drop'` (default) answers them as accepted, so that no bot retries, counts them, and hands
   * them to no sink, all but purchases, which are kept marked `bot: true` (a headless checkout
   * test, an app's web view, a false positive may be a real order); `'keep'` hands every one
   * over marked. The agent judged is the request's, or the one the shop's server sender gives
   * with a secret (`serverSecrets`). A server sender without a secret is not judged: it is
   * answered 401, and reports its events undelivered.
   */
  bots?: 'drop' | 'keep'
  /** Hears what happened to every batch. */
  onBatch?: (report: BatchReport) => void
  /**
   * Hears the relay's own failures (a sink or a store that failed), and what it drops: at most
   * once a minute per kind, an Error named `'DropNotice'` counts the events of bots it dropped,
   * the envelopes the rules or the keys refused, and the requests of a server sender without a
   * secret it refused. Without it, the notices go to `console.warn`.
   */
  onError?: (error: Error) => void
}

/** What the platform knows of a request beyond the Request itself. */
export interface RequestInfo {
  /** The connection's peer address (Node's `socket.remoteAddress`, Deno's `remoteAddr.hostname`, Bun's `server.requestIP`). */
  remoteAddress?: string
}

/** A relay (`createRelay()`): its handler, and what it did. */
export interface Relay {
  /**
   * The handler, on Web standards: a Next.js route handler, Hono, Deno, Bun and workers call it with their Request.
   * @param request - The request, as the platform hands it over.
   * @param info - The connection's peer address, where the platform gives it beside the request.
   */
  fetch(request: Request, info?: RequestInfo): Promise<Response>
  /**
   * What this relay instance did since it started, in the Prometheus text format (serve it as
   * `text/plain; version=0.0.4`): events by outcome, requests by status, 503s by reason, the
   * durations of sink and store calls, the events waiting in a forwardSink, the dead letters.
   */
  metrics(): Promise<string>
}
