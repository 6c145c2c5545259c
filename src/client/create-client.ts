import { discoveryError } from './error'
import { jsonpRequest, postRequest } from './transports'
import { untilUser } from './until-user'
import { remember, ridFor } from '../shared/rids'
import type { ClientOptions, DiscoveryClient, DiscoveryError, LinkedTracker, RequestOptions } from './types'
import type { Addon, Tracker } from '../browser/types'
import type { User } from '../shared/types'

// The events whose rid links back to a response, and the property that carries what the click
// showed.
const SHOWN_BY: Record<string, 'item_id' | 'suggestion'> = {
  'click-item': 'item_id',
  'add-to-cart': 'item_id',
  'click-suggestion': 'suggestion',
  redirect: 'suggestion'
}
const linked = new WeakSet<Tracker>()

/**
 * The add-on that fills in a click's rid: the rid of the most recent response that showed its
 * item or suggestion, as a copy of the page's properties. Properties that already carry a rid,
 * or show nothing a response showed, are left as they were. The tracker's own hook, so a click
 * gets its rid whichever way the page tracks it, and the script tag does not grow.
 */
const fillRid: Addon = {
  event(event, properties) {
    try {
      if (!Object.hasOwn(SHOWN_BY, event)) return
      const property = SHOWN_BY[event]
      // The page's properties, read here: a copy is returned.
      const given = properties as Record<string, unknown>
      const rid = given.rid == null && ridFor(property, given[property])
      if (rid) return { ...given, rid }
    } catch {
      // An event that is no string, properties that are null or throw when read: the tracker's
      // rules read them again and report it. Other values that are no object have no id a
      // response showed.
    }
  }
}

/**
 * Lets the tracker's clicks carry the rid of the response that showed the clicked item or
 * suggestion, most recent first; an explicit rid always wins. A tracker without `use` (a
 * version older than the client) is left as it is: its clicks without a rid are refused and
 * reported by name, and nothing is thrown into the page. Returns the tracker, if any.
 */
function link(tracker: Tracker | undefined): LinkedTracker | undefined {
  if (tracker && !linked.has(tracker)) {
    linked.add(tracker)
    tracker.use?.(fillRid)
  }
  // The same object, whose add-on now fills in the rid: what LinkedTracker describes. The
  // compiler cannot see that the add-on changed what the methods accept.
  return tracker as LinkedTracker | undefined
}

/** One id, or several joined by commas, as a path segment. */
const pathSegment = (ids: string | string[]) => (Array.isArray(ids) ? ids : [ids]).map(encodeURIComponent).join(',')

/**
 * Creates a typed client for SPEC's discovery routes, linked to a tracker: its `tracker` is then
 * always there.
 * @param options - The key, the service's address, and the tracker.
 */
export function createClient(options: ClientOptions & { tracker: Tracker }): DiscoveryClient & { readonly tracker: LinkedTracker }
/**
 * Creates a typed client for SPEC's discovery routes.
 * @param options - The key, the service's address, and the tracker or the user of every request.
 */
export function createClient(options: ClientOptions): DiscoveryClient
export function createClient(options: ClientOptions): DiscoveryClient {
  const { key, timeout = 5000 } = options
  const base = String(options.baseUrl || '').replace(/\/$/, '')
  // The tracker of the options, linked. A function is asked each time: its tracker may load later.
  const currentTracker = () => link(typeof options.tracker == 'function' ? options.tracker() : options.tracker)
  currentTracker()

  /** The user a request carries: the body's own (a store's), the tracker's, or the options'. */
  const userOf = (body: { user?: User } | undefined) => body?.user || currentTracker()?.user || options.user

  /**
   * Sends a route its body, with the user and the time, and resolves with SPEC's answer for it.
   * SPEC "Endpoints" requires the user on every route. A tracker given as a function (the script
   * tag's, docs/guide/discovery-client.md) may not have loaded yet when a page asks its first
   * shelf: the request then waits for the tracker's user, up to its timeout, and goes as it is
   * after that, for the service to refuse it by name.
   */
  function send<Answer>(route: string, body: object | undefined, requestOptions: RequestOptions = {}): Promise<Answer> {
    if (userOf(body) || typeof options.tracker != 'function') return sendNow(route, body, requestOptions)
    return untilUser(() => userOf(body), timeout, requestOptions.signal).then(() => sendNow(route, body, requestOptions))
  }

  /** Sends a request as it is now: by JSONP or by a POST, bounded by the timeout, cancelled by the caller's signal. */
  function sendNow<Answer>(route: string, body: object | undefined, { signal }: RequestOptions): Promise<Answer> {
    const fail = (kind: DiscoveryError['kind'], message: string, status?: number) =>
      discoveryError(route + ': ' + message + (status ? ' (HTTP ' + status + ')' : ''), { kind, route, status })
    const now = Date.now()
    const payload: Record<string, unknown> = {
      user: userOf(body),
      // SPEC declares t_client as a string on content search only.
      t_client: route == '/v3/search/content' ? String(now) : now,
      ...body
    }
    // One controller per request: concurrent requests never cancel each other.
    const controller = new AbortController()
    const own = controller.signal
    const answer = options.jsonp ? jsonpRequest(base + route, payload, key, own) : postRequest(base + route, payload, key, own, fail)
    // Bounds and cancels the request once it has started, so that a request cancelled before
    // it began still settles, as cancelled.
    const timer = setTimeout(() => controller.abort(fail('timeout', 'no answer within ' + timeout + ' ms')), timeout)
    const cancel = () => controller.abort(fail('network', 'cancelled'))
    if (signal) {
      if (signal.aborted) cancel()
      else signal.addEventListener('abort', cancel)
    }
    return answer
      .then(({ json, status }) => {
        if (json?.error) throw fail('api', json.error.message, status)
        if (status) throw fail('http', 'the service answered', status)
        // Linked again here: a script-tag tracker may have loaded while the request ran.
        currentTracker()
        remember(json)
        // The service's JSON, taken to be SPEC's answer for the route.
        return json as Answer
      })
      .catch((error) => {
        // The client's own error as it is, a cancel or a timeout as the reason it aborted
        // with, anything else as no answer.
        if (error?.name == 'DiscoveryError') throw error
        if (own.aborted) throw own.reason
        throw fail('network', error?.message || 'no answer')
      })
      .finally(() => {
        clearTimeout(timer)
        signal?.removeEventListener('abort', cancel)
      })
  }

  // SPEC "Endpoints". send() only reads the body, so the page's object never changes.
  const client: DiscoveryClient = {
    get tracker() {
      return currentTracker()
    },
    autocomplete: (request, requestOptions) => send('/v3/autocomplete', request, requestOptions),
    searchContent: (request, requestOptions) => send('/v3/search/content', request, requestOptions),
    smartCollection: (slot, request, requestOptions) => send('/v3/smart-collection/' + pathSegment(slot), request, requestOptions),
    recommend: (slot, request, requestOptions) => send('/v3/recommend/' + pathSegment(slot), request, requestOptions),
    newest: (request, requestOptions) => send('/v3/recommend/items/newest', request, requestOptions),
    // SPEC "Other routes" does not show the routes of trending and featured: these are the ones
    // the service's own SDK asks.
    trending: (request, requestOptions) => send('/v3/recommend/items/trending', request, requestOptions),
    featured: (request, requestOptions) => send('/v3/recommend/items/featured', request, requestOptions),
    latestViewed: (request, requestOptions) => send('/v3/recommend/items/viewed/latest', request, requestOptions),
    viewedViewed: (itemId, request, requestOptions) => send('/v3/recommend/items/' + pathSegment(itemId) + '/viewed/viewed', request, requestOptions),
    viewedBought: (itemId, request, requestOptions) => send('/v3/recommend/items/' + pathSegment(itemId) + '/viewed/bought', request, requestOptions),
    boughtBought: (itemIds, request, requestOptions) => send('/v3/recommend/items/' + pathSegment(itemIds) + '/bought/bought', request, requestOptions)
  }
  return client
}
