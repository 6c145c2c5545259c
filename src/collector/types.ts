// Public types of the reference collector and the live inspector (`discovery-feedback/collector`).
import type { OrderReport, RelayEvent, toNodeHandler } from '../relay'
import type { Envelope, EventName } from '../shared/types'

/**
 * An accepted event, its properties those of its event kind: the relay checked it against the
 * rules (SPEC "Event kinds") before it reached the collector.
 */
export type StoredEvent = { [E in EventName]: Envelope<E> }[EventName] & Omit<RelayEvent, keyof Envelope>

/** What the inspector may show of a value in a rejected envelope: a primitive, or only its kind. */
export type Shown = string | number | boolean | null | undefined | bigint | symbol

/** What the inspector gets of a rejected envelope: a few fields, bounded in size whatever was sent. */
export type RejectedSummary =
  | Shown
  | {
      event: Shown
      has_key: boolean
      t_client: Shown
      event_id: Shown
      user: Shown | { uid: Shown; sid: Shown }
      properties: Shown | Record<string, Shown>
    }

/** A purchase's part in its order's coverage, as the relay reports it: who sent it, whether it was the order's first copy, where it differs from the first. */
export type OrderCoverage = Omit<OrderReport, 'event'>

/** One envelope of a batch as the inspector hears of it. */
export type CollectorMessage =
  /** Stored now, with the send time the client gave (`?t_sent=`), null when it gave none; a purchase with its part in its order's coverage. */
  | { type: 'accepted'; envelope: StoredEvent; t_sent: number | null; order?: OrderCoverage }
  /** Stored before: shown without the times of a copy that was not stored; the other reporter's copy of an order with its part in the coverage. */
  | { type: 'duplicate'; envelope: Omit<StoredEvent, 'received_at' | 't_corrected'>; order?: OrderCoverage }
  /** Refused by the rules or the keys: its index in the batch and the error. */
  | { type: 'rejected'; index: number; error: string; envelope: RejectedSummary }

/** A lint: what an integration most likely got wrong (docs/guide/inspector.md). */
export interface Lint {
  /** The lint's name, such as `cart-without-click`, for counting it. */
  code: string
  /** What it means, in words, for the inspector to show. */
  text: string
}

/** A collector message with the lints the inspector found in it. */
export type LintedMessage = CollectorMessage & { lints: Lint[] }

/** The options of `createCollector()`. */
export interface CollectorOptions {
  /** The NDJSON file accepted events are appended to; its folder is made if missing. */
  file: string
  /** Largest request body in bytes (the relay's default when left out). */
  maxBodyBytes?: number | undefined
  /** The API keys the collector takes. Default: the demo store's key only. */
  keys?: Iterable<string> | undefined
}

/** The reference collector (`createCollector()`): the relay with a file sink, and what it tells the inspector. */
export interface Collector {
  /** The Node `http` handler of the collector's route: the relay's own (`toNodeHandler`). */
  handle: ReturnType<typeof toNodeHandler>
  /**
   * Calls back with every accepted, duplicate and rejected envelope; returns the unsubscribe.
   * @param listener - Called with each envelope's message.
   */
  subscribe(listener: (message: CollectorMessage) => void): () => void
  /** Returns the last messages, for an inspector that connects late. */
  recent(): CollectorMessage[]
  /** How many envelopes of each kind arrived since the start. */
  counts: Record<CollectorMessage['type'], number>
  /** Closes the data file. */
  close(): void
}

/** One session's funnel, as the inspector charts it. */
export interface FunnelRow {
  /** The session's shopper. */
  uid: string
  /** The session. */
  sid: string
  /** Its view-pages. */
  views: number
  /** Its click-items and click-suggestions. */
  clicks: number
  /** Its add-to-carts: the service's widgets' buttons, not a product page's own (update-cart). */
  carts: number
  /** Its purchases. */
  purchases: number
}

/**
 * Orders by who reported them (docs/guide/order-webhooks.md): the shopper's browser alone (page,
 * pixel, GA4 bridge), the shop's server alone (the order webhooks: what the browser lost), or both.
 */
export interface OrderCoverageStats {
  browserOnly: number
  serverOnly: number
  both: number
  /** Orders whose second copy differed from the first in some field (the first counts). */
  differing: number
}

/** The numbers behind the inspector's charts. */
export interface ActivityStats {
  /** Orders by who reported them: the browser alone, the server alone, both; the share the browser alone would have lost. */
  orders: OrderCoverageStats
  /** Sessions seen since the start. */
  sessions: number
  /** The funnel of each of the sessions active last, last active first. */
  funnel: FunnelRow[]
  /** Per rid family (autocomplete `a-`, search `s-` …): clicks carrying one of its rids, and its responses. */
  clickThrough: { prefix: string; family: string; clicks: number; responses: number }[]
  /** Whether this server answers the discovery routes, so that responses are counted. */
  seesDiscovery: boolean
  /** How often each lint was found, by its code. */
  lints: Record<string, number>
}

/** What the inspector knows beyond single events (`createActivity()`): sessions' funnels, rids, lints. */
export interface Activity {
  /**
   * Hears that a discovery response of this server returned `rid` to `user` (its request's user object).
   * @param rid - The response's `meta.rid`.
   * @param user - The user object of the request it answered.
   */
  responded(rid: unknown, user: unknown): void
  /**
   * Calls back with every collector message and its lints; returns the unsubscribe.
   * @param listener - Called with each message and its lints.
   */
  subscribe(listener: (message: LintedMessage) => void): () => void
  /**
   * Calls back with a fresh snapshot shortly after anything changed; returns the unsubscribe.
   * @param listener - Called with the numbers behind the charts.
   */
  subscribeStats(listener: (stats: ActivityStats) => void): () => void
  /** Returns the last messages with their lints, for an inspector that connects late. */
  recent(): LintedMessage[]
  /** Returns the funnel of the sessions active last, click-through per family and the lint counts. */
  snapshot(): ActivityStats
}
