import { discoveryError } from './error'
import { encode } from '../shared/json'
import { remember, ridFor } from './rids'
import type { ClientOptions, DiscoveryClient, DiscoveryError, LinkedTracker, RequestOptions } from './types'
import type { Tracker } from '../browser/types'

// The tracker's methods whose rid links back to a response, and the property that carries what
// it showed. Each tracks the event named like it in kebab-case.
const LINKED: Record<string, 'item_id' | 'suggestion'> = {
  clickItem: 'item_id',
  addToCart: 'item_id',
  clickSuggestion: 'suggestion',
  redirect: 'suggestion'
}
const linked = new WeakSet<Tracker>()

function fillRid(name: string, properties: any) {
  try {
    // An event's method is its name in camelCase.
    const method = name.replace(/-(.)/g, (_, letter) => letter.toUpperCase())
    const property = Object.hasOwn(LINKED, method) && LINKED[method]
    const rid = property && properties.rid == null && ridFor(property, properties[property])
    return rid ? { ...properties, rid } : properties
  } catch {
    // An event that is no string, properties that are null or throw when read: the tracker's
    // rules read them again and report it. Other values that are no object have no id a
    // response showed.
    return properties
  }
}

/**
 * Lets the tracker's clicks carry the rid of the response that showed the clicked item or
 * suggestion, most recent first; an explicit rid always wins. The tracker itself stays
 * unaware of the client, so the script tag does not grow. Returns the tracker, if any.
 */
function link(tracker: Tracker | undefined) {
  if (tracker && !linked.has(tracker)) {
    linked.add(tracker)
    for (const method in LINKED) {
      const original = tracker[method as 'clickItem']
      tracker[method as 'clickItem'] = (properties) => original(fillRid(method, properties))
    }
    const track = tracker.track
    tracker.track = (event, properties) => track(event, fillRid(event, properties))
  }
  return tracker
}

/*
 * SPEC "Endpoints": each method's route after /v3/. A `*` is the path segment the method's
 * first argument fills: a slot, an item id, or item ids joined by commas.
 */
const ROUTES: Record<string, string> = {
  autocomplete: 'autocomplete',
  searchContent: 'search/content',
  smartCollection: 'smart-collection/*',
  recommend: 'recommend/*',
  newest: 'recommend/items/newest',
  latestViewed: 'recommend/items/viewed/latest',
  viewedViewed: 'recommend/items/*/viewed/viewed',
  viewedBought: 'recommend/items/*/viewed/bought',
  boughtBought: 'recommend/items/*/bought/bought'
}

let jsonpCount = 0

/** Creates a typed client for SPEC's discovery routes. */
export function createClient(options: ClientOptions & { tracker: Tracker }): DiscoveryClient & { readonly tracker: LinkedTracker }
export function createClient(options: ClientOptions): DiscoveryClient
export function createClient(options: ClientOptions): DiscoveryClient {
  const { key, timeout = 5000 } = options
  const base = String(options.baseUrl || '').replace(/\/$/, '')
  const tracker = () => link(typeof options.tracker == 'function' ? options.tracker() : options.tracker)
  tracker()

  function request(route: string, body: Record<string, unknown>, { signal }: RequestOptions = {}): Promise<unknown> {
    const fail = (kind: DiscoveryError['kind'], message: string, status?: number) =>
      discoveryError(route + ': ' + message + (status ? ' (HTTP ' + status + ')' : ''), { kind, route, status })
    const now = Date.now()
    const payload: Record<string, unknown> = {
      user: tracker()?.user || options.user,
      // SPEC declares t_client as a string on content search only.
      t_client: route == '/v3/search/content' ? '' + now : now,
      ...body
    }
    // One controller per request: concurrent requests never cancel each other.
    const controller = new AbortController()
    const own = controller.signal
    // The HTTP status of an answer that is not a success.
    let status: number | undefined
    let answer: Promise<any>
    if (options.jsonp) {
      // GET with a callback, for services reached by a script element (SPEC "General rules" 3).
      // A script element sends no headers: the key goes in the query, every field as JSON.
      const name = '__discoveryFeedback' + ++jsonpCount
      const query = new URLSearchParams({ key, callback: name })
      for (const field of Object.keys(payload)) if (payload[field] !== undefined) query.set(field, encode(payload[field]))
      const script = document.createElement('script')
      answer = new Promise((resolve, reject) => {
        ;(window as any)[name] = resolve
        // Either way an event, which the catch below reads: a script that did not load as no
        // answer (an event has no message), a cancel as its reason.
        script.onerror = own.onabort = reject
        script.src = base + route + '?' + query
        document.head.append(script)
      }).finally(() => {
        delete (window as any)[name]
        script.remove()
      })
    } else {
      answer = fetch(base + route, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-key': key },
        body: encode(payload),
        signal: own
      }).then((response) => {
        if (!response.ok) status = response.status
        return response.json().catch(() => {
          throw fail('http', 'the answer is not JSON', response.status)
        })
      })
    }
    // Bounds and cancels the request once it has started, so that a request cancelled before
    // it began still settles, as cancelled.
    const timer = setTimeout(() => controller.abort(fail('timeout', 'no answer within ' + timeout + ' ms')), timeout)
    const onAbort = () => controller.abort(fail('network', 'cancelled'))
    if (signal) signal.aborted ? onAbort() : signal.addEventListener('abort', onAbort)
    return answer
      .then((json) => {
        if (json?.error) throw fail('api', json.error.message, status)
        if (status) throw fail('http', 'the service answered', status)
        // Linked again here: a script-tag tracker may have loaded while the request ran.
        tracker()
        remember(json)
        return json
      })
      .catch((error) => {
        throw error?.name == 'DiscoveryError' ? error : own.aborted ? own.reason : fail('network', error?.message || 'no answer')
      })
      .finally(() => {
        clearTimeout(timer)
        signal?.removeEventListener('abort', onAbort)
      })
  }

  const client: any = {
    get tracker() {
      return tracker()
    }
  }
  for (const method in ROUTES) {
    // The path argument is taken off first (arguments are evaluated left to right); the body
    // and the options follow. request() only reads the body, so the page's object never changes.
    client[method] = (...args: any[]) =>
      request('/v3/' + ROUTES[method].replace('*', () => [].concat(args.shift()).map(encodeURIComponent).join()), ...(args as [Record<string, unknown>, RequestOptions?]))
  }
  return client
}
