/**
 * Public types of discovery-feedback. Field names follow SPEC "Events" and
 * "User object" to the letter, because they go on the wire unchanged.
 */

/** One product line of a cart or an order (SPEC "Event kinds", purchase). */
export interface LineItem {
  /** Product id, as in your product feed. */
  item_id: string
  /** Variant id of that product. */
  variant_item_id: string
  /** Sale price of one unit, a finite number. */
  unit_price: number
  /** Units of this variant, a positive integer. */
  quantity: number
}

/** Properties of each event kind, keyed by the event name the wire carries. */
export interface EventProperties {
  /** A search suggestion in autocomplete was clicked. */
  'click-suggestion': {
    /** `meta.rid` of the autocomplete response that showed the suggestion. */
    rid: string
    suggestion: string
  }
  /** A product was clicked: search results, collections, recommendations or autocomplete. */
  'click-item': {
    /** `meta.rid` of the response that showed the item; leave out for items the service did not return. */
    rid?: string
    item_id: string
    variant_item_id: string
  }
  /** The page-redirect feature sent the shopper elsewhere. */
  redirect: {
    rid: string
    suggestion: string
  }
  /** The order is complete and its confirmation page was reached. */
  purchase: {
    order_id: string
    /** Currency code of every amount, e.g. `'EUR'`. */
    currency: string
    /** Order total. */
    revenue: number
    total_discount?: number
    total_tax?: number
    total_shipping?: number
    affiliation?: string
    line_items: LineItem[]
  }
  /** The cart changed, or the cart page was shown: the whole cart as it is now. */
  'update-cart': {
    line_items: LineItem[]
  }
  /** An add-to-cart button inside the service's widgets was used (never a product page's own button). */
  'add-to-cart': {
    item_id: string
    variant_item_id: string
    quantity: number
    rid: string
  }
  /** A new page was reached. Every field but the product ids is filled in from the page when left out. */
  'view-page': {
    /** Defaults to `location.href`. */
    url?: string
    /** Defaults to the previous page's URL (SPA) or `document.referrer`. */
    ref?: string
    /** Defaults to `innerWidth`. */
    width?: number
    /** Defaults to `innerHeight`. */
    height?: number
    /** Product pages only. */
    item_id?: string
    /** Product pages only. */
    variant_item_id?: string
  }
}

/** The seven event names of SPEC "Event kinds". */
export type EventName = keyof EventProperties

/** The shopper as SPEC "User object" describes it. */
export interface User {
  /** Permanent user id, at most 32 characters. */
  uid: string
  /** Session id, at most 32 characters; a new one after `sessionMinutes` without events. */
  sid: string
  /** Email of a logged-in shopper; lets the service recognise them across devices. */
  email?: string
  /** Shopper's IP address; the collector uses the request's address when it is left out. */
  ip?: string
  /** User agent; `navigator.userAgent` unless overridden. */
  ua?: string
  /** Language codes; `navigator.languages` unless overridden. */
  lang?: string[]
}

/** What the collector receives: SPEC "Generic event structure", one per event. */
export interface Envelope<E extends EventName = EventName> {
  event: E
  properties: EventProperties[E]
  /** Merchant API key (SPEC "Authentication" 4). */
  key: string
  /** Epoch milliseconds when the event was tracked, not when it was sent. */
  t_client: number
  user: User
  /** Unique per event, so a collector can store a resent event once. */
  event_id: string
}

/** An event that could not be tracked or sent, with where the fault lies. */
export interface FeedbackError extends Error {
  name: 'FeedbackError'
  /** The event (or command) the error is about. */
  event?: string
  /** The property path at fault, e.g. `line_items[0].quantity`. */
  field?: string
}

/** The shopper's choice about analytics storage and sending. */
export type Consent = 'granted' | 'pending' | 'denied'

export interface TrackerOptions {
  /** Merchant API key, sent as `key` in every event. Required. */
  key: string
  /**
   * Collector URL that receives the batches; absolute, or relative to the page.
   * @example 'https://collector.example/v3/feedback'
   */
  endpoint: string
  /** Minutes without an event after which a new `sid` starts. Default 30 (SPEC "User object"). */
  sessionMinutes?: number
  /** Send view-page on load, on every SPA navigation and on back/forward-cache restores. Default true. */
  autoViewPage?: boolean
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

export interface Tracker {
  clickSuggestion(properties: EventProperties['click-suggestion']): void
  clickItem(properties: EventProperties['click-item']): void
  redirect(properties: EventProperties['redirect']): void
  purchase(properties: EventProperties['purchase']): void
  updateCart(properties: EventProperties['update-cart']): void
  /** Sends add-to-cart and, as SPEC requires, the click-item that goes with it. */
  addToCart(properties: EventProperties['add-to-cart']): void
  viewPage(properties?: EventProperties['view-page']): void
  /** Generic form of the helpers above, with the same rules. */
  track<E extends EventName>(event: E, properties: EventProperties[E]): void
  /** Merges identity fields into the user, e.g. the email or the customer id after login. */
  identify(user: Partial<User>): void
  /** Sets the shopper's consent; `'denied'` also deletes our cookies and stored events. */
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
}

/** Properties whose rid a discovery client fills in: the rid may be left out. */
export type RidFilled<P> = P extends { rid: string } ? Omit<P, 'rid'> & { rid?: string } : P

/**
 * A tracker linked to a discovery client (`client.tracker`): a click may leave its rid out, and
 * gets the rid of the response that showed the item or suggestion. A click on something no
 * response of this tab showed still needs its rid: without one it is refused and reported to
 * `onError`, as any invalid call is.
 */
export interface LinkedTracker extends Omit<Tracker, 'clickSuggestion' | 'redirect' | 'addToCart' | 'track'> {
  clickSuggestion(properties: RidFilled<EventProperties['click-suggestion']>): void
  redirect(properties: RidFilled<EventProperties['redirect']>): void
  addToCart(properties: RidFilled<EventProperties['add-to-cart']>): void
  track<E extends EventName>(event: E, properties: RidFilled<EventProperties[E]>): void
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
}

/** `window.discoveryFeedback` once the script tag has loaded. */
export interface CommandFunction {
  <C extends keyof Commands>(command: C, ...args: Commands[C]): void
  /** The tracker the script tag created, once it exists. */
  tracker?: Tracker
  createTracker: (options: TrackerOptions) => Tracker
}

/* Discovery client (`discovery-feedback/client`): SPEC "Endpoints". */

/** A filter rule (SPEC "Filter rule"). */
export interface Filter {
  name: string
  /** The kinds seen are `text` and `category`. */
  type: string
  values: { value: string }[]
}

/** A sort rule (SPEC "Sort rule"). */
export interface Sort {
  field: string
  /** `desc` is the value seen. */
  order: string
}

/** Fields every route's body may carry besides user and t_client. */
export interface Paging {
  offset?: number
  limit?: number
  log?: boolean
}

export interface AutocompleteRequest {
  q: string
  suggestion_limit?: number
  item_limit?: number
  log?: boolean
}

export interface SearchContentRequest extends Paging {
  q?: string
  /** Requested content providers. */
  type?: string[]
  sort?: Sort[]
  filters?: Filter[]
}

export interface SmartCollectionRequest extends Paging {
  sort?: Sort[]
  filters?: Filter[]
  rules?: { action: string; type: string; name: string; values: unknown[] }[]
}

export interface RecommendRequest extends Paging {
  item_id?: string
  item_ids?: string[]
}

/** Response `meta`: rid is in every family's (SPEC "Response meta object"). */
export interface Meta {
  rid: string
  q?: string
  offset?: number
  limit?: number
  total?: number
  [field: string]: unknown
}

export interface Stickers {
  'in-stock'?: boolean
  'out-of-stock'?: boolean
  discount?: boolean | number[]
  'free-shipping'?: boolean
  availability?: boolean
}

export interface AutocompleteItem {
  id: string
  title: string
  product_url: string
  thumbnail_url: string
  /** One entry per variant. */
  price: number[]
  /** -1 when there is no comparison price. */
  compare_at: number
  stickers: Stickers
}

export interface ProductItem {
  id: string
  title: string
  description: string
  short_description: string
  product_url: string
  image_url: string
  image_2_url: string
  thumbnail_url: string
  brand: string
  price: number[]
  compare_at: number
  discount: number[]
  availability: boolean
  quantity: number
  created_at: string
  sku: string[]
  variants_ids: string[]
  tags: string[]
  category: { category1: string; category2: string; category3: string; category4: string }[]
  stickers: Stickers
  [field: string]: unknown
}

export interface ContentItem {
  source: string
  id: string
  image_id: string
  image_url: string
  tagged_products: { id: number; name: string; domain_key: string; product_link: string; product_url: string; image_url: string }[]
  post: { username: string; content: string; hashtags: string[]; created_time: string; [field: string]: unknown }
  [field: string]: unknown
}

export interface Facet {
  name: string
  type: 'category' | 'text' | 'range'
  sort_type: 'count' | 'value'
  values: { name: string; value: string; count: number; selected: boolean; has_children: boolean; from?: number; to?: number }[]
  min?: number
  max?: number
}

export interface AutocompleteResponse {
  meta: Meta
  suggestions: { value: string }[]
  items: AutocompleteItem[]
}

export interface SearchContentResponse {
  meta: Meta
  facets: Facet[]
  items: ContentItem[]
}

export interface SmartCollectionResponse {
  meta: Meta
  facets: Facet[]
  items: ProductItem[]
  banner?: Record<string, unknown>
  /** Present when the collection redirects; items and facets are then empty. */
  redirect?: { name: string; url: string }
}

export interface RecommendResponse {
  meta: Meta
  items: ProductItem[]
}

/** Per-request settings. */
export interface RequestOptions {
  /** Cancels this request only. */
  signal?: AbortSignal
}

export interface ClientOptions {
  /** Merchant API key, sent as the `X-Key` header (SPEC "Authentication"). */
  key: string
  /** Service address; routes are appended, e.g. `https://discovery.example`. */
  baseUrl: string
  /**
   * The tracker whose `user` every request carries, and whose clicks get the rid of the
   * response that showed the item or suggestion. A function is asked at each request, for a
   * tracker that loads later (an async script tag).
   */
  tracker?: Tracker | (() => Tracker | undefined)
  /** The user when there is no tracker (a server, a test). */
  user?: User
  /** Milliseconds before a request fails with kind `timeout`. Default 5000. */
  timeout?: number
  /** Use GET with a JSONP callback instead of POST JSON (SPEC "General rules" 3). */
  jsonp?: boolean
}

/** Why a discovery request failed, or why a recommendation store refused an event. */
export interface DiscoveryError extends Error {
  name: 'DiscoveryError'
  /**
   * `api`: the service answered SPEC's `{ error: { message } }`; `http`: another non-2xx or
   * unreadable answer; `network`: no answer; `timeout`: no answer in time; `invalid`: a store
   * event broke its payload rule and nothing was sent.
   */
  kind: 'api' | 'http' | 'network' | 'timeout' | 'invalid'
  /** HTTP status, where there was an answer. */
  status?: number
  /** The route, e.g. `/v3/autocomplete`; absent on kind `invalid`. */
  route?: string
  /** On kind `invalid`: the store event, e.g. `viewed`. */
  event?: string
  /** On kind `invalid`: the payload field, e.g. `item_id`. */
  field?: string
}

export interface DiscoveryClient {
  /** The tracker of the options once it exists, linked: its clicks may leave the rid out. */
  readonly tracker: LinkedTracker | undefined
  autocomplete(request: AutocompleteRequest, options?: RequestOptions): Promise<AutocompleteResponse>
  searchContent(request?: SearchContentRequest, options?: RequestOptions): Promise<SearchContentResponse>
  smartCollection(slot: string, request?: SmartCollectionRequest, options?: RequestOptions): Promise<SmartCollectionResponse>
  /** The recommended way to get recommendations: a slot configured in the merchant dashboard. */
  recommend(slot: string, request?: RecommendRequest, options?: RequestOptions): Promise<RecommendResponse>
  newest(request?: Paging, options?: RequestOptions): Promise<RecommendResponse>
  /** Products this user viewed recently. */
  latestViewed(request?: Paging, options?: RequestOptions): Promise<RecommendResponse>
  viewedViewed(itemId: string, request?: Paging, options?: RequestOptions): Promise<RecommendResponse>
  viewedBought(itemId: string, request?: Paging, options?: RequestOptions): Promise<RecommendResponse>
  boughtBought(itemIds: string[], request?: Paging, options?: RequestOptions): Promise<RecommendResponse>
}

/* Recommendation stores (`createRecommendations`): SPEC "Client-library recommendation store events". */

/** A user in a store payload. SPEC's listing types `ip` as a number: one is sent as text. */
export type StoreUser = Partial<Omit<User, 'ip'>> & { ip?: string | number }

/** Fields every store event that requests may carry. offset and limit: an integer or integer text. */
export interface StorePaging {
  offset?: number | string
  limit?: number | string
  /** Overrides the tracker's (or the store's) user for this request. */
  user?: StoreUser
  log?: boolean
}

export interface RecommendationPayloads {
  /** Runs the store's last request again, these fields merged in; `slot` asks a predefined slot. */
  request: StorePaging & { slot?: string; item_id?: string | number; item_ids?: (string | number)[] }
  newest: StorePaging
  trending: StorePaging
  /** Products this user viewed recently. */
  latest: StorePaging
  /** Shoppers who viewed this item also viewed. */
  viewed: StorePaging & { item_id: string | number }
  /** Shoppers who viewed this item also bought. */
  bought: StorePaging & { item_id: string | number }
  /** Frequently bought together with these items. */
  frequentlyPurchased: StorePaging & { item_ids: (string | number)[] }
  /** A slot configured in the merchant dashboard. */
  predefined: StorePaging & { slot: string; item_id?: string | number; item_ids?: (string | number)[] }
  featured: { user?: StoreUser; log?: boolean }
  /** Request data merged into every later request of this store. */
  setRequestBody: { payload: Record<string, unknown> }
}

export type RecommendationEventName = keyof RecommendationPayloads

/** The payload argument of an event: optional where every field is. */
export type RecommendationPayloadArgument<N extends RecommendationEventName> = {} extends RecommendationPayloads[N]
  ? [payload?: RecommendationPayloads[N]]
  : [payload: RecommendationPayloads[N]]

/** SPEC's event object: `{ name, payload }`. */
export type RecommendationEvent = {
  [N in RecommendationEventName]: {} extends RecommendationPayloads[N] ? { name: N; payload?: RecommendationPayloads[N] } : { name: N; payload: RecommendationPayloads[N] }
}[RecommendationEventName]

export interface RecommendationState {
  /** `idle` until the first request; `loading` keeps the previous items on show. */
  status: 'idle' | 'loading' | 'ready' | 'error'
  items: ProductItem[]
  meta?: Meta
  error?: DiscoveryError
  /** What was last asked of the service. */
  request?: RecommendationEvent
}

export interface RecommendationStore {
  /** Emits a store event; returns the store, so calls chain. Never throws: a refusal goes into the state. */
  emit<N extends RecommendationEventName>(name: N, ...payload: RecommendationPayloadArgument<N>): RecommendationStore
  emit(event: RecommendationEvent): RecommendationStore
  /** Calls the listener after every change of state; returns its unsubscribe. */
  subscribe(listener: () => void): () => void
  /** The current state: the same object until it changes (React's useSyncExternalStore relies on it). */
  getState(): RecommendationState
}

export interface RecommendationOptions {
  /** The user of every request of this store, instead of the tracker's. */
  user?: StoreUser
  /** SPEC does not show the route behind trending: the store asks this slot. Default `trending`. */
  trendingSlot?: string
  /** SPEC does not show the route behind featured: the store asks this slot. Default `featured`. */
  featuredSlot?: string
  /** Called with every error that lands in the state: refusals and failed requests. */
  onError?: (error: DiscoveryError) => void
}
