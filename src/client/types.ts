// Public types of the discovery client (`discovery-feedback/client`): SPEC "Endpoints".
import type { Tracker } from '../browser/types'
import type { EventName, EventProperties, User } from '../shared/types'

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
  /**
   * Milliseconds before a request fails with kind `timeout`. Default 5000. A request made before
   * a tracker given as a function has loaded first waits up to as long for the tracker's user.
   */
  timeout?: number
  /**
   * Use GET with a JSONP callback instead of POST JSON (SPEC "General rules" 3). The fields go
   * into the query as the service's own SDK writes them: `user[uid]=…&sort[0][field]=…`.
   */
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
  /** Products trending in the store, at `/v3/recommend/items/trending`: SPEC does not show the route; the service's own SDK asks this one. */
  trending(request?: Paging, options?: RequestOptions): Promise<RecommendResponse>
  /** Featured products of the store, at `/v3/recommend/items/featured`: SPEC does not show the route; the service's own SDK asks this one. */
  featured(request?: Paging, options?: RequestOptions): Promise<RecommendResponse>
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
// `{} extends P` holds where every field of P is optional.
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export type RecommendationPayloadArgument<N extends RecommendationEventName> = {} extends RecommendationPayloads[N]
  ? [payload?: RecommendationPayloads[N]]
  : [payload: RecommendationPayloads[N]]

/** SPEC's event object: `{ name, payload }`. */
export type RecommendationEvent = {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  [N in RecommendationEventName]: {} extends RecommendationPayloads[N]
    ? { name: N; payload?: RecommendationPayloads[N] }
    : { name: N; payload: RecommendationPayloads[N] }
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
  /**
   * A slot of the slot route (`/v3/recommend/{slot}`) for trending to ask instead of
   * `/v3/recommend/items/trending`, the route the service's own SDK asks (SPEC shows none).
   */
  trendingSlot?: string
  /**
   * A slot of the slot route (`/v3/recommend/{slot}`) for featured to ask instead of
   * `/v3/recommend/items/featured`, the route the service's own SDK asks (SPEC shows none).
   */
  featuredSlot?: string
  /** Called with every error that lands in the state: refusals and failed requests. */
  onError?: (error: DiscoveryError) => void
}
