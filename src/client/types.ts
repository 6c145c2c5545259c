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
  /**
   * Sends click-suggestion; the rid may be left out.
   * @param properties - The suggestion's text, and its rid if the page knows it.
   */
  clickSuggestion(properties: RidFilled<EventProperties['click-suggestion']>): void
  /**
   * Sends redirect; the rid may be left out.
   * @param properties - The suggestion that redirected, and its rid if the page knows it.
   */
  redirect(properties: RidFilled<EventProperties['redirect']>): void
  /**
   * Sends add-to-cart and its click-item; the rid may be left out.
   * @param properties - The product's ids and the quantity, and the rid if the page knows it.
   */
  addToCart(properties: RidFilled<EventProperties['add-to-cart']>): void
  /**
   * Generic form of the helpers, with the same rules; the rid may be left out.
   * @param event - The event's SPEC name.
   * @param properties - The event's properties.
   */
  track<E extends EventName>(event: E, properties: RidFilled<EventProperties[E]>): void
}

/** A filter rule (SPEC "Filter rule"). */
export interface Filter {
  /** The field filtered on, such as a facet's name. */
  name: string
  /** The kinds seen are `text` and `category`. */
  type: string
  /** The values kept. */
  values: { value: string }[]
}

/** A sort rule (SPEC "Sort rule"). */
export interface Sort {
  /** The field sorted by. */
  field: string
  /** `desc` is the value seen. */
  order: string
}

/** Fields every route's body may carry besides user and t_client. */
export interface Paging {
  /** Results to skip, for the next page of them. */
  offset?: number
  /** Most results to return. */
  limit?: number
  /** SPEC's `log` flag, carried in every request body. */
  log?: boolean
}

/** The body of an autocomplete request (SPEC `POST /v3/autocomplete`), besides user and t_client. */
export interface AutocompleteRequest {
  /** What the shopper has typed so far. */
  q: string
  /** Most suggestions to return. */
  suggestion_limit?: number
  /** Most products to return. */
  item_limit?: number
  /** SPEC's `log` flag, carried in every request body. */
  log?: boolean
}

/** The body of a content search (SPEC `POST /v3/search/content`), besides user and t_client. */
export interface SearchContentRequest extends Paging {
  /** The query. */
  q?: string
  /** Requested content providers. */
  type?: string[]
  /** Sort rules, first one first. */
  sort?: Sort[]
  /** Filter rules, all of which a result keeps. */
  filters?: Filter[]
}

/** The body of a smart collection request (SPEC `POST /v3/smart-collection/{slot}`), besides user and t_client. */
export interface SmartCollectionRequest extends Paging {
  /** Sort rules, first one first. */
  sort?: Sort[]
  /** Filter rules, all of which a result keeps. */
  filters?: Filter[]
  /** The collection's own rules, as SPEC lists their fields (their allowed values are not shown). */
  rules?: { action: string; type: string; name: string; values: unknown[] }[]
}

/** The body of a recommendation request (SPEC's `/v3/recommend/…` routes), besides user and t_client. */
export interface RecommendRequest extends Paging {
  /** The product the recommendations are about, on routes about one. */
  item_id?: string
  /** The products the recommendations are about, on routes about several. */
  item_ids?: string[]
}

/** Response `meta`: rid is in every family's (SPEC "Response meta object"). */
export interface Meta {
  /** The response's id, which clicks on what it showed carry back (`rid`). */
  rid: string
  /** The query, as the service read it. */
  q?: string
  /** Results skipped. */
  offset?: number
  /** Most results returned. */
  limit?: number
  /** Results in all, beyond this page of them. */
  total?: number
  /** Any other field of the family's meta (`corrected_q`, `no_result`, `user_id` …). */
  [field: string]: unknown
}

/** The badges of a product, as the service gives them. */
export interface Stickers {
  'in-stock'?: boolean
  'out-of-stock'?: boolean
  discount?: boolean | number[]
  'free-shipping'?: boolean
  availability?: boolean
}

/** A product in an autocomplete response (SPEC "Autocomplete item"). */
export interface AutocompleteItem {
  /** The product's id. */
  id: string
  /** The product's name. */
  title: string
  /** The product page's URL. */
  product_url: string
  /** A small image's URL. */
  thumbnail_url: string
  /** One entry per variant. */
  price: number[]
  /** -1 when there is no comparison price. */
  compare_at: number
  /** Badges to show on the product: in stock, out of stock, discounted, free shipping. */
  stickers: Stickers
}

/** A product in a smart collection or a recommendation response (SPEC "Product item"); a text left empty is `''`. */
export interface ProductItem {
  /** The product's id. */
  id: string
  /** The product's name. */
  title: string
  /** The product's description. */
  description: string
  /** A shorter description. */
  short_description: string
  /** The product page's URL. */
  product_url: string
  /** The main image's URL. */
  image_url: string
  /** A second image's URL. */
  image_2_url: string
  /** A small image's URL. */
  thumbnail_url: string
  /** The brand. */
  brand: string
  /** One price per variant. */
  price: number[]
  /** The comparison ("was") price; -1 when there is none. */
  compare_at: number
  /** Discounts (SPEC does not give their unit). */
  discount: number[]
  /** Whether the product can be bought. */
  availability: boolean
  /** Stock (the examples show -1 and 1). */
  quantity: number
  /** When the product was added, ISO 8601 in UTC. */
  created_at: string
  /** The variants' SKUs. */
  sku: string[]
  /** The variants' ids. */
  variants_ids: string[]
  /** The product's tags. */
  tags: string[]
  /** Its categories, four levels each; an unused level is `''`. */
  category: { category1: string; category2: string; category3: string; category4: string }[]
  /** Badges to show on the product. */
  stickers: Stickers
  /** Any other field SPEC lists (`seller`, `rating_score`, `custom_fields` …). */
  [field: string]: unknown
}

/** A post in a content search response (SPEC "Content item"). */
export interface ContentItem {
  /** The content provider's name. */
  source: string
  /** The post's id. */
  id: string
  /** The image's id. */
  image_id: string
  /** The image's URL, protocol-relative. */
  image_url: string
  /** The shop's products the post shows. */
  tagged_products: { id: number; name: string; domain_key: string; product_link: string; product_url: string; image_url: string }[]
  /** The post itself: its author, text, hashtags and time. */
  post: { username: string; content: string; hashtags: string[]; created_time: string; [field: string]: unknown }
  /** Any other field SPEC lists (`original_image_url`, `external_media_id` …). */
  [field: string]: unknown
}

/** A facet of a response's results, to filter them by (SPEC "Facet"). */
export interface Facet {
  /** The field the facet counts. */
  name: string
  /** How its values are chosen: categories, texts, or a range of numbers. */
  type: 'category' | 'text' | 'range'
  /** Whether its values come by count or by value. */
  sort_type: 'count' | 'value'
  /** Its values, each with how many results have it and whether the request filtered on it. */
  values: { name: string; value: string; count: number; selected: boolean; has_children: boolean; from?: number; to?: number }[]
  /** The lowest value of a range facet. */
  min?: number
  /** The highest value of a range facet. */
  max?: number
}

/** The answer to an autocomplete request. */
export interface AutocompleteResponse {
  /** The response's meta, with its `rid`. */
  meta: Meta
  /** Searches to suggest. */
  suggestions: { value: string }[]
  /** Products to show. */
  items: AutocompleteItem[]
}

/** The answer to a content search. */
export interface SearchContentResponse {
  /** The response's meta, with its `rid`. */
  meta: Meta
  /** The facets of the results. */
  facets: Facet[]
  /** The posts found. */
  items: ContentItem[]
}

/** The answer to a smart collection request. */
export interface SmartCollectionResponse {
  /** The response's meta, with its `rid`. */
  meta: Meta
  /** The facets of the results. */
  facets: Facet[]
  /** The collection's products. */
  items: ProductItem[]
  /** The collection's banner (empty in SPEC's examples). */
  banner?: Record<string, unknown>
  /** Present when the collection redirects; items and facets are then empty. */
  redirect?: { name: string; url: string }
}

/** The answer to a recommendation request. */
export interface RecommendResponse {
  /** The response's meta, with its `rid`. */
  meta: Meta
  /** The products recommended. */
  items: ProductItem[]
}

/** Per-request settings. */
export interface RequestOptions {
  /** Cancels this request only. */
  signal?: AbortSignal
}

/** The options of `createClient()`. */
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
  /** Always `'DiscoveryError'`, to tell the client's errors from others. */
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

/**
 * A client of SPEC's discovery routes (`createClient()`): each route a method, each request with
 * the shopper's user, each answer's rid remembered for the clicks on what it showed. A method
 * rejects with a `DiscoveryError`.
 */
export interface DiscoveryClient {
  /** The tracker of the options once it exists, linked: its clicks may leave the rid out. */
  readonly tracker: LinkedTracker | undefined
  /**
   * Suggestions and products for what the shopper is typing (SPEC `POST /v3/autocomplete`).
   * @param request - The query and how many suggestions and products to return.
   * @param options - This request's own settings: a `signal` to cancel it.
   */
  autocomplete(request: AutocompleteRequest, options?: RequestOptions): Promise<AutocompleteResponse>
  /**
   * Content posts for a query (SPEC `POST /v3/search/content`).
   * @param request - The query, the providers, sort and filter rules, and paging.
   * @param options - This request's own settings: a `signal` to cancel it.
   */
  searchContent(request?: SearchContentRequest, options?: RequestOptions): Promise<SearchContentResponse>
  /**
   * The products of a smart collection configured in the merchant dashboard (SPEC `POST /v3/smart-collection/{slot}`).
   * @param slot - The collection's slot.
   * @param request - Sort and filter rules, the collection's rules, and paging.
   * @param options - This request's own settings: a `signal` to cancel it.
   */
  smartCollection(slot: string, request?: SmartCollectionRequest, options?: RequestOptions): Promise<SmartCollectionResponse>
  /**
   * The recommended way to get recommendations: a slot configured in the merchant dashboard.
   * @param slot - The recommendation's slot.
   * @param request - The products it is about, and paging.
   * @param options - This request's own settings: a `signal` to cancel it.
   */
  recommend(slot: string, request?: RecommendRequest, options?: RequestOptions): Promise<RecommendResponse>
  /**
   * The store's newest products (SPEC `/v3/recommend/items/newest`).
   * @param request - Paging.
   * @param options - This request's own settings: a `signal` to cancel it.
   */
  newest(request?: Paging, options?: RequestOptions): Promise<RecommendResponse>
  /**
   * Products trending in the store, at `/v3/recommend/items/trending`: SPEC does not show the route; the service's own SDK asks this one.
   * @param request - Paging.
   * @param options - This request's own settings: a `signal` to cancel it.
   */
  trending(request?: Paging, options?: RequestOptions): Promise<RecommendResponse>
  /**
   * Featured products of the store, at `/v3/recommend/items/featured`: SPEC does not show the route; the service's own SDK asks this one.
   * @param request - Paging.
   * @param options - This request's own settings: a `signal` to cancel it.
   */
  featured(request?: Paging, options?: RequestOptions): Promise<RecommendResponse>
  /**
   * Products this user viewed recently.
   * @param request - Paging.
   * @param options - This request's own settings: a `signal` to cancel it.
   */
  latestViewed(request?: Paging, options?: RequestOptions): Promise<RecommendResponse>
  /**
   * Products that shoppers who viewed this one viewed too.
   * @param itemId - The product viewed.
   * @param request - Paging.
   * @param options - This request's own settings: a `signal` to cancel it.
   */
  viewedViewed(itemId: string, request?: Paging, options?: RequestOptions): Promise<RecommendResponse>
  /**
   * Products that shoppers who viewed this one bought.
   * @param itemId - The product viewed.
   * @param request - Paging.
   * @param options - This request's own settings: a `signal` to cancel it.
   */
  viewedBought(itemId: string, request?: Paging, options?: RequestOptions): Promise<RecommendResponse>
  /**
   * Products frequently bought together with these (SPEC `/v3/recommend/items/{item_ids}/bought/bought`).
   * @param itemIds - The products bought.
   * @param request - Paging.
   * @param options - This request's own settings: a `signal` to cancel it.
   */
  boughtBought(itemIds: string[], request?: Paging, options?: RequestOptions): Promise<RecommendResponse>
}

/* Recommendation stores (`createRecommendations`): SPEC "Client-library recommendation store events". */

/** A user in a store payload. SPEC's listing types `ip` as a number: one is sent as text. */
export type StoreUser = Partial<Omit<User, 'ip'>> & { ip?: string | number }

/** Fields every store event that requests may carry. offset and limit: an integer or integer text. */
export interface StorePaging {
  /** Results to skip. */
  offset?: number | string
  /** Most results to return. */
  limit?: number | string
  /** Overrides the tracker's (or the store's) user for this request. */
  user?: StoreUser
  /** SPEC's `log` flag, carried in every request body. */
  log?: boolean
}

/** The payload of each store event, by the event's name (SPEC "Client-library recommendation store events"). */
export interface RecommendationPayloads {
  /** Runs the store's last request again, these fields merged in; `slot` asks a predefined slot. */
  request: StorePaging & { slot?: string; item_id?: string | number; item_ids?: (string | number)[] }
  /** The store's newest products. */
  newest: StorePaging
  /** Products trending in the store. */
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
  /** Featured products of the store. */
  featured: { user?: StoreUser; log?: boolean }
  /** Request data merged into every later request of this store. */
  setRequestBody: { payload: Record<string, unknown> }
}

/** The names of the store events: what a shelf may ask for. */
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

/** What a recommendation store holds: the shelf's products, and how the last request went. */
export interface RecommendationState {
  /** `idle` until the first request; `loading` keeps the previous items on show. */
  status: 'idle' | 'loading' | 'ready' | 'error'
  /** The products to show. */
  items: ProductItem[]
  /** The meta of the answer the items came from, with its `rid`. */
  meta?: Meta
  /** Why the last event was refused or its request failed, while `status` is `error`. */
  error?: DiscoveryError
  /** What was last asked of the service. */
  request?: RecommendationEvent
}

/** A recommendation shelf's store (`createRecommendations()`): emit its events, read and follow its state. */
export interface RecommendationStore {
  /**
   * Emits a store event; returns the store, so calls chain. Never throws: a refusal goes into the state.
   * @param name - The event's name, such as `'viewed'`.
   * @param payload - The event's payload, where it takes one.
   */
  emit<N extends RecommendationEventName>(name: N, ...payload: RecommendationPayloadArgument<N>): RecommendationStore
  /**
   * Emits a store event given as SPEC's event object; returns the store, so calls chain.
   * @param event - `{ name, payload }`.
   */
  emit(event: RecommendationEvent): RecommendationStore
  /**
   * Calls the listener after every change of state; returns its unsubscribe.
   * @param listener - Called with no argument: read `getState()`.
   */
  subscribe(listener: () => void): () => void
  /** The current state: the same object until it changes (React's useSyncExternalStore relies on it). */
  getState(): RecommendationState
}

/** The options of `createRecommendations()`. */
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
