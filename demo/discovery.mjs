// The discovery routes of SPEC "Endpoints" over the demo catalog: plain text matching, but the
// shapes, the X-Key check and the rids are the real thing. Each family has its rid prefix.
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { KEY_MISSING } from './collector.mjs'

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

const matches = (q) => {
  const words = String(q || '').toLowerCase().split(/\s+/).filter(Boolean)
  return catalog.filter((product) => words.every((word) => product.title.toLowerCase().includes(word)))
}
const page = (items, body, fallbackLimit) => {
  const offset = Math.max(0, Number(body.offset) || 0)
  const limit = Math.max(1, Math.min(100, Number(body.limit) || fallbackLimit))
  return { offset, limit, total: items.length, items: items.slice(offset, offset + limit) }
}
// Related products: the catalog's neighbours, a stand-in for what shoppers viewed or bought.
const related = (ids, step) => {
  const index = catalog.findIndex((product) => ids.includes(product.id))
  return index < 0 ? [] : [1, 2, 3, 4, 5, 6].map((n) => catalog[(index + n * step) % catalog.length]).filter((product) => !ids.includes(product.id))
}
const recommendation = (items, body, user) => {
  const { offset, limit, total, items: shown } = page(items, body, 4)
  return { meta: { limit, offset, user_id: (user && user.uid) || '', total, rid: rid('r') }, items: shown.map(productItem) }
}

const ROUTES = [
  [
    /^\/v3\/autocomplete$/,
    (body) => {
      const found = body.q ? matches(body.q) : []
      const suggestionLimit = Number(body.suggestion_limit) || 5
      const itemLimit = Number(body.item_limit) || 4
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
      return { meta: { q: String(body.q || ''), suggestion_limit: suggestionLimit, item_limit: itemLimit, rid: rid('a') }, suggestions, items }
    }
  ],
  [
    /^\/v3\/search\/content$/,
    (body) => {
      const { offset, limit, total, items } = page(matches(body.q), body, 10)
      return {
        meta: { q: String(body.q || ''), offset, limit, total, filters: body.filters || [], sort: body.sort || [], type: body.type || [], rid: rid('s'), query_type: 'text' },
        facets: [],
        items: items.map((product) => ({
          source: 'demo',
          id: 'post-' + product.id,
          image_id: product.id,
          image_url: product.image,
          low_resolution_image_url: product.image,
          original_image_url: product.image,
          external_media_id: product.id,
          tagged_products: [{ id: Number(product.id), name: product.title, domain_key: 'demo', product_link: '/product/' + product.id, product_url: '/product/' + product.id, image_url: product.image }],
          post: { profile_picture: '', username: 'demo', location_name: '', created_time: '2026-01-01T10:00:00.000+00:00', hashtags: ['demo'], content: product.title, votes_up: 0, votes_down: 0 }
        }))
      }
    }
  ],
  [
    /^\/v3\/smart-collection\/([^/]+)$/,
    (body, [slot]) => {
      const sorted = [...catalog].sort((a, b) => (body.sort && body.sort[0] && body.sort[0].field == 'price' ? b.price - a.price : 0))
      const { offset, limit, total, items } = page(slot == 'sale' ? sorted.filter((product) => product.price < 60) : sorted, body, 12)
      const meta = { no_result: !total, corrected_q: '', q: '', offset, limit, total, filters: body.filters || [], sort: body.sort || [], rid: rid('c') }
      if (slot == 'moved') return { meta, facets: [], items: [], banner: {}, redirect: { name: 'sale', url: '/spa/sale' } }
      return { meta, facets: [], items: items.map(productItem), banner: {} }
    }
  ],
  [/^\/v3\/recommend\/items\/newest$/, (body, _, user) => recommendation([...catalog].reverse(), body, user)],
  [/^\/v3\/recommend\/items\/viewed\/latest$/, (body, _, user, viewed) => recommendation(viewed(user), body, user)],
  [/^\/v3\/recommend\/items\/([^/]+)\/viewed\/viewed$/, (body, [id], user) => recommendation(related([id], 1), body, user)],
  [/^\/v3\/recommend\/items\/([^/]+)\/viewed\/bought$/, (body, [id], user) => recommendation(related([id], 5), body, user)],
  [/^\/v3\/recommend\/items\/([^/]+)\/bought\/bought$/, (body, [ids], user) => recommendation(related(ids.split(','), 7), body, user)],
  [/^\/v3\/recommend\/([^/]+)$/, (body, _, user) => recommendation(body.item_id ? related([body.item_id], 3) : catalog.slice(8), body, user)]
]

const CORS = { 'access-control-allow-origin': '*' }

/**
 * Answers the discovery routes; false for other paths. `viewed(user)` lists the products the
 * user viewed lately (the demo reads them from the collector). Two slots show errors on
 * purpose: `broken` answers 500, `slow` answers after 3 s.
 */
export function handleDiscovery(request, response, { key, viewed }) {
  const url = new URL(request.url, 'http://demo')
  const route = ROUTES.find(([pattern]) => pattern.test(url.pathname))
  if (!route) return false
  if (request.method == 'OPTIONS') {
    response.writeHead(204, { ...CORS, 'access-control-allow-methods': 'GET, POST', 'access-control-allow-headers': 'content-type, x-key', 'access-control-max-age': '86400' }).end()
    return true
  }
  const callback = url.searchParams.get('callback')
  const reply = (status, json) => {
    // JSONP (SPEC "General rules" 3): the answer is a call of the page's function.
    if (callback && /^[\w$.]{1,64}$/.test(callback)) {
      response.writeHead(200, { ...CORS, 'content-type': 'text/javascript; charset=utf-8' }).end(`${callback}(${JSON.stringify(json)})`)
    } else response.writeHead(status, { ...CORS, 'content-type': 'application/json' }).end(JSON.stringify(json))
  }
  const answer = (body) => {
    const given = request.headers['x-key'] || url.searchParams.get('key')
    if (!given) return reply(401, { error: { message: KEY_MISSING } })
    if (given != key) return reply(403, { error: { message: 'The API key is not valid.' } })
    const params = url.pathname.match(route[0]).slice(1).map(decodeURIComponent)
    if (params[0] == 'broken') return reply(500, { error: { message: 'The slot failed on purpose.' } })
    const result = () => reply(200, route[1](body, params, body.user, viewed))
    if (params[0] == 'slow') setTimeout(result, 3000)
    else result()
  }
  if (request.method == 'GET') {
    // GET encoding is not in SPEC; here every field is a query parameter holding JSON.
    const body = {}
    for (const [name, value] of url.searchParams) {
      try {
        body[name] = JSON.parse(value)
      } catch {
        body[name] = value
      }
    }
    answer(body)
    return true
  }
  let text = ''
  request.on('data', (chunk) => {
    if (text.length < 65536) text += chunk
  })
  request.on('end', () => {
    try {
      answer(JSON.parse(text || '{}'))
    } catch {
      reply(400, { error: { message: 'body is not JSON' } })
    }
  })
  return true
}
