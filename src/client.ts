import { discoveryError } from './shared/error'
import { encode } from './shared/json'
import { remember, ridFor } from './rids'
import type { ClientOptions, DiscoveryClient, LinkedTracker, Meta, RequestOptions } from './client/types'
import type { EventName } from './shared/types'
import type { Tracker } from './browser/types'

// The events whose rid links back to a response, and which of its ids shows the link.
const LINKED: Record<string, [event: EventName, kind: 'item' | 'suggestion']> = {
  clickItem: ['click-item', 'item'],
  addToCart: ['add-to-cart', 'item'],
  clickSuggestion: ['click-suggestion', 'suggestion'],
  redirect: ['redirect', 'suggestion']
}
const linked = new WeakSet<Tracker>()

function fillRid(kind: 'item' | 'suggestion', properties: any) {
  try {
    if (!properties || typeof properties != 'object' || properties.rid != null) return properties
    const rid = ridFor(kind, kind == 'item' ? properties.item_id : properties.suggestion)
    return rid ? { ...properties, rid } : properties
  } catch {
    // Properties that throw when read: the tracker's rules read them again and report it.
    return properties
  }
}

/**
 * Lets the tracker's clicks carry the rid of the response that showed the clicked item or
 * suggestion, most recent first; an explicit rid always wins. The tracker itself stays
 * unaware of the client, so the script tag does not grow.
 */
function link(tracker: Tracker) {
  if (linked.has(tracker)) return
  linked.add(tracker)
  const methods = tracker as any
  for (const method of Object.keys(LINKED)) {
    const original = methods[method]
    methods[method] = (properties: unknown) => original(fillRid(LINKED[method][1], properties))
  }
  const track = tracker.track
  tracker.track = (event, properties) => {
    const found = Object.values(LINKED).find(([name]) => name == event)
    return track(event, found ? fillRid(found[1], properties) : properties)
  }
}

let jsonpCount = 0

/** GET with a callback, for services reached by a script element (SPEC "General rules" 3). */
function jsonp(url: string, signal: AbortSignal): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const name = '__discoveryFeedback' + ++jsonpCount
    const script = document.createElement('script')
    const done = () => {
      delete (window as any)[name]
      script.remove()
      signal.removeEventListener('abort', abort)
    }
    const abort = () => {
      done()
      reject(signal.reason)
    }
    ;(window as any)[name] = (body: unknown) => {
      done()
      resolve(body)
    }
    script.onerror = () => {
      done()
      reject(new TypeError('the script did not load'))
    }
    signal.addEventListener('abort', abort)
    script.src = url + (url.includes('?') ? '&' : '?') + 'callback=' + name
    document.head.append(script)
  })
}

/** Creates a typed client for SPEC's discovery routes. */
export function createClient(options: ClientOptions & { tracker: Tracker }): DiscoveryClient & { readonly tracker: LinkedTracker }
export function createClient(options: ClientOptions): DiscoveryClient
export function createClient(options: ClientOptions): DiscoveryClient {
  const { key, timeout = 5000 } = options
  const base = String(options.baseUrl || '').replace(/\/$/, '')
  const tracker = () => {
    const found = typeof options.tracker == 'function' ? options.tracker() : options.tracker
    if (found) link(found)
    return found
  }
  tracker()

  function request<T>(route: string, body: Record<string, unknown>, { signal }: RequestOptions = {}): Promise<T> {
    const payload: Record<string, unknown> = {
      user: tracker()?.user || options.user,
      // SPEC declares t_client as a string on content search only.
      t_client: route == '/v3/search/content' ? String(Date.now()) : Date.now(),
      ...body
    }
    // One controller per request: concurrent requests never cancel each other.
    const controller = new AbortController()
    const onAbort = () => controller.abort(discoveryError('network', route, 'cancelled'))
    if (signal) signal.aborted ? onAbort() : signal.addEventListener('abort', onAbort)
    const timer = setTimeout(() => controller.abort(discoveryError('timeout', route, 'no answer within ' + timeout + ' ms')), timeout)
    let answer: Promise<unknown>
    if (options.jsonp) {
      // A script element sends no headers: the key goes in the query, every field as JSON.
      const query = new URLSearchParams({ key })
      for (const field of Object.keys(payload)) if (payload[field] !== undefined) query.set(field, encode(payload[field]))
      answer = jsonp(base + route + '?' + query, controller.signal)
    } else {
      answer = fetch(base + route, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-key': key },
        body: encode(payload),
        signal: controller.signal
      }).then((response) =>
        response.json().then(
          (json) => (response.ok ? json : Promise.reject(json && json.error ? discoveryError('api', route, String(json.error.message), response.status) : discoveryError('http', route, 'the service answered', response.status))),
          () => Promise.reject(discoveryError('http', route, 'the answer is not JSON', response.status))
        )
      )
    }
    return answer
      .then((json: any) => {
        if (json && json.error) throw discoveryError('api', route, String(json.error.message))
        const meta: Meta | undefined = json && json.meta
        // Linked again here: a script-tag tracker may have loaded while the request ran.
        tracker()
        if (meta && typeof meta.rid == 'string') {
          remember(
            meta.rid,
            (json.items || []).map((item: { id: unknown }) => String(item.id)),
            (json.suggestions || []).map((suggestion: { value: unknown }) => String(suggestion.value))
          )
        }
        return json as T
      })
      .catch((error) => {
        throw error && error.name == 'DiscoveryError' ? error : controller.signal.aborted ? controller.signal.reason : discoveryError('network', route, String(error && error.message))
      })
      .finally(() => {
        clearTimeout(timer)
        if (signal) signal.removeEventListener('abort', onAbort)
      })
  }

  const path = (id: string) => encodeURIComponent(id)
  return {
    get tracker() {
      return tracker() as LinkedTracker | undefined
    },
    autocomplete: (body, options) => request('/v3/autocomplete', { ...body }, options),
    searchContent: (body = {}, options) => request('/v3/search/content', { ...body }, options),
    smartCollection: (slot, body = {}, options) => request('/v3/smart-collection/' + path(slot), { ...body }, options),
    recommend: (slot, body = {}, options) => request('/v3/recommend/' + path(slot), { ...body }, options),
    newest: (body = {}, options) => request('/v3/recommend/items/newest', { ...body }, options),
    latestViewed: (body = {}, options) => request('/v3/recommend/items/viewed/latest', { ...body }, options),
    viewedViewed: (itemId, body = {}, options) => request('/v3/recommend/items/' + path(itemId) + '/viewed/viewed', { ...body }, options),
    viewedBought: (itemId, body = {}, options) => request('/v3/recommend/items/' + path(itemId) + '/viewed/bought', { ...body }, options),
    boughtBought: (itemIds, body = {}, options) =>
      request('/v3/recommend/items/' + itemIds.map(path).join(',') + '/bought/bought', { ...body }, options)
  }
}

export { createRecommendations } from './recommendations'
export type {
  AutocompleteItem,
  AutocompleteRequest,
  AutocompleteResponse,
  ClientOptions,
  ContentItem,
  DiscoveryClient,
  DiscoveryError,
  Facet,
  Filter,
  LinkedTracker,
  Meta,
  Paging,
  ProductItem,
  RecommendationEvent,
  RecommendationEventName,
  RecommendationOptions,
  RecommendationPayloads,
  RecommendationState,
  RecommendationStore,
  RecommendRequest,
  RecommendResponse,
  RequestOptions,
  SearchContentRequest,
  SearchContentResponse,
  SmartCollectionRequest,
  SmartCollectionResponse,
  Sort,
  StoreUser
} from './client/types'
