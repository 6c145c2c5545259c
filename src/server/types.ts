// Public types of the server sender (`discovery-feedback/server`).
import type { EventName, EventProperties, User } from '../shared/types'

/** Settings of a server-side tracker. */
export interface ServerTrackerOptions {
  /** Merchant API key, sent as `key` in every event. */
  key: string
  /** Collector URL. */
  endpoint: string
  /**
   * The secret that proves to `discovery-feedback/relay` that this is the shop's server (one of
   * its `serverSecrets`), sent as `Authorization: Bearer <secret>`: only then does the relay keep
   * the shopper's `ip` and `ua` these events carry, and take its purchase over a page's. Keep it
   * on the server, never in a page.
   */
  secret?: string
  /** Send once this many events wait; a request still takes all that fit in 60 KiB. Default 50. */
  maxBatchEvents?: number
  /** Milliseconds an event may wait for others. Default 1000. */
  flushInterval?: number
  /** Requests in flight at once, however busy the shop. Default 4. */
  maxInFlight?: number
  /** Events held while the collector cannot take them (about 1 KB each); beyond it the oldest are dropped and reported. Default 20,000. */
  maxQueuedEvents?: number
  /** Tries per event before it is given up and reported. Default 6 (about a minute of backoff). */
  maxAttempts?: number
  /** Milliseconds a request may go unanswered before it counts as failed. Default 10,000. */
  requestTimeout?: number
  /** Hears every event given up: refused, overflowing, or out of tries. */
  onError?: (error: Error) => void
}

/** Counts of a server tracker's events, as the browser tracker's `stats()`. */
export interface ServerStats {
  /** Waiting or in flight. */
  queued: number
  /** Answered 2xx. */
  sent: number
  /** Sends that failed and will be tried again. */
  retried: number
  /** Events given up, by reason; `onError` heard each. */
  dropped: {
    /** Calls the rules refused (track threw). */
    invalid: number
    /** An event larger than a request may be. */
    too_large: number
    /** The collector answered a 4xx other than 408 and 429. */
    rejected: number
    /** Beyond `maxQueuedEvents`, oldest first. */
    overflow: number
    /** Out of tries, or still unsent when `close` ran out of time. */
    undelivered: number
  }
}

/** How long `flush` and `close` may take. */
export interface WaitOptions {
  /** Milliseconds; default 10,000. */
  timeout?: number
}

/** The shopper of a call from the shop's server: SPEC asks for ip and ua when the browser is not the caller. */
export type ServerUser = User & { ip: string; ua: string }

/** A server-side tracker (`createServerTracker()`): events of shoppers who are not on the line, from memory. */
export interface ServerTracker {
  /**
   * Queues an event for a shopper who is not on the line: a purchase from an order webhook.
   * `user` needs uid and sid (the ones the browser had, e.g. from the order's cookies) and,
   * as SPEC asks when the call does not come from the shopper's browser, ip and ua. An
   * add-to-cart sends its click-item along, first, as SPEC asks of every sender.
   * Throws a FeedbackError naming the event, the field and the rule.
   * @param event - The event's SPEC name, such as `'purchase'`.
   * @param properties - The event's properties.
   * @param user - The shopper: uid, sid, ip and ua.
   */
  track<E extends EventName>(event: E, properties: EventProperties[E], user: ServerUser): void
  /**
   * Sends what waits now; resolves once nothing is left, or at the timeout with the rest still queued.
   * @param options - How long to wait at most.
   */
  flush(options?: WaitOptions): Promise<void>
  /**
   * Shutdown: sends what it can until the timeout, then gives up the rest and reports it.
   * @param options - How long to wait at most.
   */
  close(options?: WaitOptions): Promise<void>
  /** What happened to the events so far. */
  stats(): ServerStats
}

/** An order webhook's handler, on Web standards: Node (with a Request made from the incoming message), Next.js route handlers, Hono, workers, Deno, Bun. */
export type OrderWebhook = (request: Request) => Promise<Response>

/** Settings of `shopifyOrderWebhook`. */
export interface ShopifyOrderWebhookOptions {
  /** The secret Shopify signs the webhook with: the app's client secret, or the key the shop's admin shows under Settings → Notifications → Webhooks. */
  secret: string
  /** The shop's server tracker (`createServerTracker`, with the relay's `secret`), which sends the purchase. */
  tracker: ServerTracker
  /** The topics whose order is a purchase. Default `['orders/create', 'orders/paid']`; others are answered 200 with nothing sent. */
  topics?: string[]
  /** Milliseconds to wait for the collector before answering 503. Default 4,000: Shopify waits 5 s for an answer. */
  timeout?: number
}

/** Settings of `wooCommerceOrderWebhook`. */
export interface WooCommerceOrderWebhookOptions {
  /** The webhook's secret, as entered under WooCommerce → Settings → Advanced → Webhooks. */
  secret: string
  /** The shop's server tracker (`createServerTracker`, with the relay's `secret`), which sends the purchase. */
  tracker: ServerTracker
  /**
   * Which of the order's ids is the purchase's `order_id`, as the shop's pages report it:
   * `'number'` (default: GTM4WP's transaction_id, and what shoppers see) or `'id'` (Google
   * Analytics for WooCommerce's). They differ only where a plugin renumbers orders.
   */
  orderId?: 'number' | 'id'
  /** Milliseconds to wait for the collector before answering 503. Default 30,000: WooCommerce waits a minute, and sends a failed delivery no more. */
  timeout?: number
}
