// Public types of the browser tracker (`discovery-feedback` and its script tag).
import type { EventName, EventProperties, FeedbackError, Outcome, User } from '../shared/types'

/** The shopper's choice about analytics storage and sending. */
export type Consent = 'granted' | 'pending' | 'denied'

/** The options of `createTracker()`, and of the script tag as `data-*` attributes (`sessionMinutes` is `data-session-minutes`). */
export interface TrackerOptions {
  /** Merchant API key, sent as `key` in every event. Required. */
  key: string
  /**
   * Collector URL that receives the batches; absolute, or relative to the page.
   * @example 'https://collector.example/v3/feedback'
   */
  endpoint: string
  /**
   * What the endpoint speaks. `'batch'` (default): a collector or relay that takes JSON arrays
   * of events (docs/reference/collector-protocol.md), such as `discovery-feedback/relay`. `'spec'`: the
   * service itself, straight from the page, as its own feedback library sends: one request per
   * event, the body one SPEC envelope (`event`, `properties`, `key`, `t_client`, `user`), the
   * key also in the query (`?key=`), typed text/plain so no preflight is needed.
   *
   * Use `'spec'` when there is no relay to run. It costs one request per event instead of one per
   * batch, and the service cannot be asked which events it lacks: an event a beacon took as the
   * page went counts as delivered, and is not sent again if the beacon was lost on the way.
   * While the service is failing, nothing is beaconed; events wait in the outbox for the next
   * page. The outbox, retries and backoff work as with `'batch'`; `event_id` and the send time
   * are not sent, so the service cannot store a resent event once or correct the device clock.
   * @example 'spec'
   */
  format?: 'batch' | 'spec'
  /** Minutes without an event after which a new `sid` starts. Default 30 (SPEC "User object"). */
  sessionMinutes?: number
  /** Send view-page on load, on every SPA navigation and on back/forward-cache restores. Default true. */
  autoViewPage?: boolean
  /**
   * For a site whose routes live in the URL's fragment (`/#/cart`, a hash router): a change of
   * the fragment alone is a new page, and sends a view-page. Default false: a fragment-only
   * change (an in-page `#anchor` link) stays on the same page, SPEC's view-page being sent when
   * the customer "reaches any new page".
   */
  hashRouting?: boolean
  /**
   * Cookie domain: `'auto'` finds the site's registrable domain (never a public suffix such as
   * `co.uk`), so `www.` and `shop.` share one shopper; or name it, e.g. `'shop.example'`.
   * Default: the page's host only.
   */
  cookieDomain?: string
  /** Mark identity cookies `Secure`. Default: true on https pages. */
  cookieSecure?: boolean
  /** SameSite attribute of identity cookies. Default `'Lax'`. */
  cookieSameSite?: 'Lax' | 'Strict' | 'None'
  /**
   * Identity from your platform; each given field wins over the cookie-kept one.
   * @example { uid: customer.id, email: customer.email }
   */
  user?: Partial<User>
  /** Send a batch once this many events wait to be sent. Default 50. */
  maxBatchEvents?: number
  /** Largest request body in bytes; a backlog is split into bodies of at most this size. Default and most 61440 (the browser's keepalive budget is 64 KiB per page). */
  maxBatchBytes?: number
  /** Milliseconds the oldest waiting event may wait for others to join its batch. Default 1000. */
  flushInterval?: number
  /**
   * `'pending'`: nothing stored or sent until `consent('granted')`; events wait in memory.
   * `'denied'`: nothing stored or sent at all. Default `'granted'`.
   */
  consent?: Consent
  /**
   * Send even when the browser signals Global Privacy Control. Only for sites whose legal
   * basis allows it: honouring GPC is the site's legal responsibility.
   */
  ignoreGlobalPrivacyControl?: boolean
  /** Treat Do-Not-Track (deprecated) as an opt-out, like Global Privacy Control. */
  respectDoNotTrack?: boolean
  /** `'memory'`: no cookies and no localStorage; uid and sid last as long as the page. Default `'cookie'`. */
  storage?: 'cookie' | 'memory'
  /** Log every event and request to the console. */
  debug?: boolean
  /** Hears every event that was refused or could not be sent. */
  onError?: (error: FeedbackError) => void
  /** Throw errors instead of reporting them: for the merchant's own tests, never in production. */
  strict?: boolean
}

/**
 * A page's tracker, made by `createTracker()` (or, on a script-tag page, `discoveryFeedback.tracker`):
 * one method per SPEC event, the shopper's identity and consent, and what became of the events.
 * No method throws into the page: a call with bad properties is reported (console and
 * `onError`) and dropped, unless `strict`.
 */
export interface Tracker {
  /**
   * Sends click-suggestion: the shopper clicked a search suggestion in autocomplete.
   * @param properties - The suggestion's text and the `rid` of the autocomplete response that showed it.
   */
  clickSuggestion(properties: EventProperties['click-suggestion']): void
  /**
   * Sends click-item: the shopper clicked a product, in search results, a collection, a recommendation or autocomplete.
   * @param properties - The product's ids, and the `rid` of the response that showed it when the service returned it.
   */
  clickItem(properties: EventProperties['click-item']): void
  /**
   * Sends redirect: the service's page-redirect feature took the shopper elsewhere.
   * @param properties - The suggestion that redirected, and the `rid` of the response that gave it.
   */
  redirect(properties: EventProperties['redirect']): void
  /**
   * Sends purchase, once per order: on the order's confirmation page.
   * @param properties - The order: its id, currency, revenue and line items, and the optional amounts.
   */
  purchase(properties: EventProperties['purchase']): void
  /**
   * Sends update-cart: the cart changed (a product page's own button among others), or the cart page was shown.
   * @param properties - The whole cart as it is now, as `line_items`.
   */
  updateCart(properties: EventProperties['update-cart']): void
  /**
   * Sends add-to-cart and, as SPEC requires, the click-item that goes with it: only for an
   * add-to-cart button inside the service's widgets, never a product page's own.
   * @param properties - The product's ids, the quantity, and the `rid` of the response that showed it.
   */
  addToCart(properties: EventProperties['add-to-cart']): void
  /**
   * Sends view-page: a new page was reached. The automatic view-pages call it already
   * (`autoViewPage`); a product page calls it itself to add the product's ids.
   * @param properties - What the page adds (`item_id`, `variant_item_id` on a product page); url, ref, width and height are filled in when left out.
   */
  viewPage(properties?: EventProperties['view-page']): void
  /**
   * Generic form of the helpers above, with the same rules.
   * @param event - The event's SPEC name, such as `'click-item'`.
   * @param properties - The event's properties, as its helper takes them.
   */
  track<E extends EventName>(event: E, properties: EventProperties[E]): void
  /**
   * Merges identity fields into the user, e.g. the email or the customer id after login.
   * @param user - The fields to add or replace; those left out stay as they were.
   */
  identify(user: Partial<User>): void
  /**
   * Sets the shopper's consent; `'denied'` also deletes our cookies and stored events.
   * @param state - `'granted'`, `'pending'` or `'denied'`.
   */
  consent(state: Consent): void
  /** Logout: sends what is queued, then starts a new uid and sid and forgets email and platform ids. */
  reset(): void
  /** The current shopper; the same identity the discovery routes need. */
  readonly user: User
  /** What happened to the events so far: for debugging, tests and monitoring. */
  stats(): Stats
  /** Sends every queued event now; resolves once each request was answered or failed. */
  flush(): Promise<void>
  /** Removes listeners and history patches, and sends what is queued. */
  destroy(): void
  /**
   * Plugs an add-on in (docs/guide/extending.md); returns the function that removes it.
   * Add-ons are called in the order they were added.
   * @param addon - An object with any of the hooks `event`, `outcome`, `view` and `consent`.
   */
  use(addon: Addon): () => void
}

/**
 * What an add-on may do: change an event before it is recorded, hear what became of it, hear
 * the page views and the consent. Every hook is optional, and one that throws is reported
 * (console and `onError`) and passed over: the event goes on as if that add-on were not there.
 */
export interface Addon {
  /**
   * Before the rules: the event as the page tracked it, its properties not yet checked (a
   * view-page already completed from the page). Return new properties to record instead (a copy:
   * the caller's object is the caller's), `false` to drop the event, or nothing to leave it.
   * @param event - The event's SPEC name.
   * @param properties - Its properties as the page gave them, unchecked.
   */
  event?(event: EventName, properties: unknown): unknown
  /**
   * After the rules: the event was taken (`error` undefined) or refused, and why.
   * @param outcome - The event, its properties and the error, if any.
   */
  outcome?(outcome: Outcome): void
  /**
   * The URL of the view-page counted last: told when the add-on is added, at every view-page
   * taken, and as undefined when the page comes back from the back/forward cache (its next
   * view-page counts again, even of the same URL).
   * @param url - The URL of that view-page, or undefined.
   */
  view?(url: string | undefined): void
  /**
   * The shopper's consent: told when the add-on is added, and at every `consent()` call, whoever
   * made it (the shop, or a banner's adapter, which hears it here to stay in step).
   * @param state - The consent now: `'granted'`, `'pending'` or `'denied'`.
   */
  consent?(state: Consent): void
}

/** Counts of a tracker's events. */
export interface Stats {
  /** Waiting in the outbox, including events a beacon took without confirmation. */
  queued: number
  /** Handed over: answered 2xx, or taken by a beacon as the page went away. */
  sent: number
  /** Sends that failed and will be tried again (network error, 5xx, 408, 429). */
  retried: number
  /** Events given up, by reason; onError heard each. */
  dropped: {
    /** Calls refused by the rules. */
    invalid: number
    /** An event larger than a request may be. */
    too_large: number
    /** The collector answered a 4xx that no retry can fix. */
    rejected: number
    /** The outbox bound (2,000 events, 1 MiB) was reached: oldest first. */
    overflow: number
    /** Older than 7 days when a later page found it. */
    expired: number
  }
}

/** Arguments of each command of the script-tag function, derived from the tracker's methods. */
export type Commands = { [E in EventName]: [properties: EventProperties[E]] } & {
  init: [options: TrackerOptions]
  flush: []
  user: [user: Partial<User>]
  consent: [state: Consent]
  reset: []
  use: [addon: Addon]
}

/** `window.discoveryFeedback` once the script tag has loaded. */
export interface CommandFunction {
  /**
   * Runs a command: an event by its SPEC name (`discoveryFeedback('click-item', {…})`), or
   * `'init'`, `'user'`, `'consent'`, `'flush'`, `'reset'` or `'use'`. Calls made before the tag
   * loaded wait in the stub's queue and run in order.
   * @param command - The event's name, or the command's.
   * @param args - What the tracker's method of that command takes (`Commands`).
   */
  <C extends keyof Commands>(command: C, ...args: Commands[C]): void
  /** The tracker the script tag created, once it exists. */
  tracker?: Tracker
  /** The tracker's factory, as the module exports it, for a second tracker of a page's own. */
  createTracker: (options: TrackerOptions) => Tracker
}
