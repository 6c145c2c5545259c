// This module answers the discovery routes of SPEC "Endpoints" over the demo catalog. Its
// matching is plain text, but the shapes, the X-Key check and the rids are the real thing, and
// each route family has its own rid prefix.
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import qs from 'qs'
import { readBody } from './request-body.mjs'
import { KEY_INVALID, KEY_MISSING } from '../dist/collector.mjs'

const catalog = JSON.parse(readFileSync(new URL('./catalog.json', import.meta.url), 'utf8'))
const rid = (prefix) => prefix + '-' + randomUUID()

const productItem = (product, index) => ({
  id: product.id,
  title: product.title,
  description: '',
  short_description: '',
  product_url: '/product/' + product.id,
  image_url: product.image,
  image_2_url: '',
  thumbnail_url: product.image,
  brand: 'Demo',
  seller: '',
  condition: 'new',
  product_type: '',
  delivery_time: '',
  shipping_cost: '',
  shipping_weight: '',
  price: product.variants.map(() => product.price),
  compare_at: -1,
  discount: [],
  availability: true,
  quantity: 1,
  created_at: new Date(Date.UTC(2026, 0, 1) + index * 864e5).toISOString(),
  sku: product.variants.map((variant) => variant.id),
  variants_ids: product.variants.map((variant) => variant.id),
  variants: [],
  color: [],
  material: [],
  size: [],
  color_variants: 0,
  rating_score: -1,
  tags: [],
  category: [{ category1: 'Apparel', category2: '', category3: '', category4: '' }],
  custom_fields: {},
  stickers: { discount: [], availability: true, 'in-stock': true, 'out-of-stock': false, 'free-shipping': product.price >= 50 }
})

/** A BadRequest is a request the caller got wrong; the route answers it 400 with its message. */
class BadRequest extends Error {}

// String() and Number() of an object call its toString or valueOf, which a JSON body can set
// to anything, so the routes read only strings, numbers and booleans where text or a count belongs.
const scalar = (body, field) => {
  const value = body[field]
  if (value !== null && typeof value == 'object') throw new BadRequest(field + ' must be a string or a number')
  return value
}
const text = (body, field) => String(scalar(body, field) ?? '')
const count = (body, field) => Number(scalar(body, field)) || 0
const uidOf = (body) => {
  const uid = body.user && typeof body.user == 'object' ? body.user.uid : undefined
  if (uid != null && typeof uid != 'string') throw new BadRequest('user.uid must be a string')
  return uid || ''
}
// SPEC "Endpoints": every request body contains user, and SPEC "User object" requires its uid
// and sid. A request without them is refused by name rather than answered for nobody.
const requireUser = (body) => {
  const { user } = body
  if (user == null || user === '') throw new BadRequest('user is required')
  if (typeof user != 'object' || Array.isArray(user)) throw new BadRequest('user must be an object')
  for (const field of ['uid', 'sid']) {
    if (user[field] == null || user[field] === '') throw new BadRequest('user.' + field + ' is required')
    if (typeof user[field] != 'string') throw new BadRequest('user.' + field + ' must be a string')
  }
}
// SPEC bodies nest a few levels (filters → values → value). The routes echo some fields, so they
// refuse a body nested deeper before any use, since it could overflow JSON.stringify's stack.
const deeperThan = (value, levels) =>
  value !== null && typeof value == 'object' && (levels == 0 || Object.values(value).some((child) => deeperThan(child, levels - 1)))

const matches = (q) => {
  const words = q.toLowerCase().split(/\s+/).filter(Boolean)
  return catalog.filter((product) => words.every((word) => product.title.toLowerCase().includes(word)))
}
const page = (items, body, fallbackLimit) => {
  const offset = Math.max(0, count(body, 'offset'))
  const limit = Math.max(1, Math.min(100, count(body, 'limit') || fallbackLimit))
  return { offset, limit, total: items.length, items: items.slice(offset, offset + limit) }
}
// The related products are the catalog's neighbours, a stand-in for what shoppers viewed or bought.
const related = (ids, step) => {
  const index = catalog.findIndex((product) => ids.includes(product.id))
  return index < 0 ? [] : [1, 2, 3, 4, 5, 6].map((n) => catalog[(index + n * step) % catalog.length]).filter((product) => !ids.includes(product.id))
}
const recommendation = (items, body) => {
  const { offset, limit, total, items: shown } = page(items, body, 4)
  return { meta: { limit, offset, user_id: uidOf(body), total, rid: rid('r') }, items: shown.map(productItem) }
}
// SPEC does not show the routes behind trending and featured. The demo answers stand-ins for
// them: every third product, and the dearest first.
const TRENDING = catalog.filter((_, index) => index % 3 == 0)
const FEATURED = [...catalog].sort((a, b) => b.price - a.price)

const ROUTES = [
  [
    /^\/v3\/autocomplete$/,
    (body) => {
      const q = text(body, 'q')
      const found = q ? matches(q) : []
      const suggestionLimit = count(body, 'suggestion_limit') || 5
      const itemLimit = count(body, 'item_limit') || 4
      const suggestions = [...new Set(found.map((product) => product.title.toLowerCase()))].slice(0, suggestionLimit).map((value) => ({ value }))
      const items = found.slice(0, itemLimit).map((product) => ({
        id: product.id,
        title: product.title,
        product_url: '/product/' + product.id,
        thumbnail_url: product.image,
        price: product.variants.map(() => product.price),
        compare_at: -1,
        stickers: { 'in-stock': true, 'out-of-stock': false, discount: false, 'free-shipping': product.price >= 50 }
      }))
      return { meta: { q, suggestion_limit: suggestionLimit, item_limit: itemLimit, rid: rid('a') }, suggestions, items }
    }
  ],
  [
    /^\/v3\/search\/content$/,
    (body) => {
      const q = text(body, 'q')
      const { offset, limit, total, items } = page(matches(q), body, 10)
      return {
        meta: { q, offset, limit, total, filters: body.filters || [], sort: body.sort || [], type: body.type || [], rid: rid('s'), query_type: 'text' },
        facets: [],
        items: items.map((product) => ({
          source: 'demo',
          id: 'post-' + product.id,
          image_id: product.id,
          image_url: product.image,
          low_resolution_image_url: product.image,
          original_image_url: product.image,
          external_media_id: product.id,
          tagged_products: [
            {
              id: Number(product.id),
              name: product.title,
              domain_key: 'demo',
              product_link: '/product/' + product.id,
              product_url: '/product/' + product.id,
              image_url: product.image
            }
          ],
          post: {
            profile_picture: '',
            username: 'demo',
            location_name: '',
            created_time: '2026-01-01T10:00:00.000+00:00',
            hashtags: ['demo'],
            content: product.title,
            votes_up: 0,
            votes_down: 0
          }
        }))
      }
    }
  ],
  [
    /^\/v3\/smart-collection\/([^/]+)$/,
    (body, [slot]) => {
      const sorted = [...catalog].sort((a, b) => (body.sort && body.sort[0] && body.sort[0].field === 'price' ? b.price - a.price : 0))
      const { offset, limit, total, items } = page(slot == 'sale' ? sorted.filter((product) => product.price < 60) : sorted, body, 12)
      const meta = { no_result: !total, corrected_q: '', q: '', offset, limit, total, filters: body.filters || [], sort: body.sort || [], rid: rid('c') }
      if (slot == 'moved') return { meta, facets: [], items: [], banner: {}, redirect: { name: 'sale', url: '/spa/sale' } }
      return { meta, facets: [], items: items.map(productItem), banner: {} }
    }
  ],
  [/^\/v3\/recommend\/items\/newest$/, (body) => recommendation([...catalog].reverse(), body)],
  // The routes the service's own SDK asks for trending and featured.
  [/^\/v3\/recommend\/items\/trending$/, (body) => recommendation(TRENDING, body)],
  [/^\/v3\/recommend\/items\/featured$/, (body) => recommendation(FEATURED, body)],
  [/^\/v3\/recommend\/items\/viewed\/latest$/, (body, _, viewed) => recommendation(viewed(uidOf(body)), body)],
  [/^\/v3\/recommend\/items\/([^/]+)\/viewed\/viewed$/, (body, [id]) => recommendation(related([id], 1), body)],
  [/^\/v3\/recommend\/items\/([^/]+)\/viewed\/bought$/, (body, [id]) => recommendation(related([id], 5), body)],
  [/^\/v3\/recommend\/items\/([^/]+)\/bought\/bought$/, (body, [ids]) => recommendation(related(ids.split(','), 7), body)],
  [
    /^\/v3\/recommend\/([^/]+)$/,
    (body, [slot]) => {
      // Clients that ask a slot for trending and featured (the stores' trendingSlot and
      // featuredSlot options) get the same stand-ins from these two slots.
      if (slot == 'trending') return recommendation(TRENDING, body)
      if (slot == 'featured') return recommendation(FEATURED, body)
      return recommendation(body.item_id ? related([text(body, 'item_id')], 3) : catalog.slice(8), body)
    }
  ]
]

const CORS = { 'access-control-allow-origin': '*' }

// SPEC defines no GET encoding. The service's own SDK writes a JSONP request's fields in qs's
// bracket encoding (`user[uid]=u1&sort[0][field]=price`), and the demo's first clients wrote each
// field as a parameter holding JSON (`user={"uid":"u1"}`): both are read. The query is bounded as
// a posted body is: a few levels deep, a few hundred parameters and array entries, and a query
// past a bound is refused rather than cut short. qs leaves out any name that would reach the
// object prototype (__proto__, constructor), and takes the last of a repeated parameter, as
// URLSearchParams does.
const QUERY_OPTIONS = {
  ignoreQueryPrefix: true,
  depth: 5,
  strictDepth: true,
  parameterLimit: 500,
  arrayLimit: 100,
  throwOnLimitExceeded: true,
  allowPrototypes: false,
  duplicates: 'last'
}

/** A top-level parameter's text as the JSON it holds, or as the text itself. */
const jsonOrText = (value) => {
  try {
    return JSON.parse(value)
  } catch {
    return value
  }
}

function queryBody(url) {
  let fields
  try {
    fields = qs.parse(url.search, QUERY_OPTIONS)
  } catch (error) {
    throw new BadRequest('the query is refused: ' + error.message)
  }
  // fromEntries makes each an own field of a plain object, as JSON.parse does for POST.
  return Object.fromEntries(Object.entries(fields).map(([name, value]) => [name, typeof value == 'string' ? jsonOrText(value) : value]))
}

// A posted body may hold this many characters.
const MAX_BODY_CHARACTERS = 65536

/** Reads a posted body as text. A longer one is refused, and the rest of it is read and dropped. */
async function readPosted(request) {
  const text = await readBody(request, MAX_BODY_CHARACTERS, { text: true })
  if (text == null) {
    request.resume()
    throw new BadRequest('body is longer than ' + MAX_BODY_CHARACTERS + ' characters')
  }
  return text
}

function parseBody(text) {
  try {
    return JSON.parse(text || '{}')
  } catch {
    throw new BadRequest('body is not JSON')
  }
}

/** Returns the path's parameters, decoded. A parameter that is not valid percent-encoding is the caller's mistake. */
function pathParams(pathname, pattern) {
  try {
    return pathname.match(pattern).slice(1).map(decodeURIComponent)
  } catch {
    throw new BadRequest('the path is not valid percent-encoding')
  }
}

const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * What is wrong with the key a request gave: '' when it is fine. Keys are sent in every shop
 * page, so they are no secret worth a constant-time comparison: a set lookup does.
 */
function keyFault(given, keys) {
  if (typeof given != 'string' || !given) return KEY_MISSING
  return keys && !keys.has(given) ? KEY_INVALID : ''
}

/** Resolves with the status and the JSON answer of one discovery request. */
async function answer(request, url, [pattern, respond], { keys, viewed, responded }) {
  const body = request.method == 'GET' ? queryBody(url) : parseBody(await readPosted(request))
  const fault = keyFault(request.headers['x-key'] || url.searchParams.get('key'), keys)
  if (fault) return [fault == KEY_MISSING ? 401 : 403, { error: { message: fault } }]
  if (!body || typeof body != 'object' || Array.isArray(body)) throw new BadRequest('body must be a JSON object')
  if (deeperThan(body, 6)) throw new BadRequest('body is nested too deep')
  requireUser(body)
  const params = pathParams(url.pathname, pattern)
  if (params[0] == 'broken') return [500, { error: { message: 'The slot failed on purpose.' } }]
  if (params[0] == 'slow') await wait(3000)
  const json = respond(body, params, viewed)
  // The inspector links each rid to the session it went to, since clicks echo it (SPEC "Events").
  responded(json.meta.rid, body.user)
  return [200, json]
}

/**
 * The expression a JSONP answer calls, or null when the name is none a page could have given.
 * A name such as `cb` or `jQuery.cb` is called as it is. The service's SDK names its callbacks
 * `__jp` and nanoid characters, `-` among them, which JavaScript would read as a subtraction:
 * such a name is called as a property of window.
 */
function jsonpCallee(name) {
  if (!name) return null
  if (/^[\w$.]{1,64}$/.test(name)) return name
  return /^[\w$-]{1,64}$/.test(name) ? `window[${JSON.stringify(name)}]` : null
}

/**
 * Answers the discovery routes, and resolves false for other paths. `keys` is the set of API keys
 * taken; `viewed(uid)` lists the products the user viewed lately (the demo reads them from the
 * collector); `responded(rid, user)` hears each rid answered and the request's user. Two slots
 * show errors on purpose: `broken` answers 500, and `slow` answers after 3 s.
 * A fault of the caller's is answered 400; any other failure rejects, for the server to answer.
 */
export async function handleDiscovery(request, response, url, { keys, viewed, responded }) {
  const route = ROUTES.find(([pattern]) => pattern.test(url.pathname))
  if (!route) return false
  if (request.method == 'OPTIONS') {
    response
      .writeHead(204, {
        ...CORS,
        'access-control-allow-methods': 'GET, POST',
        'access-control-allow-headers': 'content-type, x-key',
        'access-control-max-age': '86400'
      })
      .end()
    return true
  }
  const callee = jsonpCallee(url.searchParams.get('callback'))
  const reply = (status, json) => {
    // The caller may have gone while the slow slot waited.
    if (response.destroyed) return
    // With JSONP (SPEC "General rules" 3), the answer is a call of the page's function.
    if (callee) {
      response.writeHead(200, { ...CORS, 'content-type': 'text/javascript; charset=utf-8' }).end(`${callee}(${JSON.stringify(json)})`)
    } else response.writeHead(status, { ...CORS, 'content-type': 'application/json' }).end(JSON.stringify(json))
  }
  try {
    reply(...(await answer(request, url, route, { keys, viewed, responded })))
  } catch (error) {
    if (!(error instanceof BadRequest)) throw error
    reply(400, { error: { message: error.message } })
  }
  return true
}
