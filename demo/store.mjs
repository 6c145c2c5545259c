// The demo store: the pages a shop would have, each using the library the way a shop would.
// Listing and product pages use the script tag, the cart adds a recommendation shelf, the
// confirmation page writes its purchase the way a checkout template does, and /spa imports
// the ES module and navigates with pushState.
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'

const catalog = JSON.parse(readFileSync(new URL('./catalog.json', import.meta.url), 'utf8'))
const byId = new Map(catalog.map((product) => [product.id, product]))
const orders = new Map()
const MAX_ORDERS = 1000

// Built files are read per request, so a rebuild shows without a restart.
const STATIC = {
  '/discovery-feedback.min.js': '../dist/discovery-feedback.min.js',
  '/discovery-feedback-client.min.js': '../dist/discovery-feedback-client.min.js',
  '/discovery-feedback-declarative.min.js': '../dist/discovery-feedback-declarative.min.js',
  '/esm/index.mjs': '../dist/index.mjs',
  '/esm/nanoid.js': '../node_modules/nanoid/index.browser.js',
  '/esm/url-alphabet/index.js': '../node_modules/nanoid/url-alphabet/index.js',
  '/esm/js-cookie.mjs': '../node_modules/js-cookie/dist/js.cookie.mjs'
}

const escape = (text) =>
  String(text).replace(/[&<>"']/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char])
// Data placed inside <script>: JSON, with `<` escaped so no value can close the script element.
const data = (value) => JSON.stringify(value).replace(/</g, '\\u003c')
const money = (amount) => '€' + amount.toFixed(2)
const cents = (amount) => Math.round(amount * 100) / 100

const CSS = `
*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,sans-serif;color:#1d2330;background:#f6f7f9}
header{display:flex;gap:1rem;align-items:center;flex-wrap:wrap;padding:.8rem 1.2rem;background:#1d2330;color:#fff}
header strong{margin-right:auto;font-size:1.1rem}header a{color:#fff;text-decoration:none;opacity:.85}header a:hover{opacity:1}
main{max-width:1100px;margin:0 auto;padding:1.2rem}footer{text-align:center;color:#667;font-size:.85rem;padding:2rem 1rem}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(160px,1fr));gap:1rem}
.tile{display:block;background:#fff;border-radius:12px;overflow:hidden;color:inherit;text-decoration:none;box-shadow:0 1px 3px #0001}
.tile img{width:100%;aspect-ratio:1;display:block}.tile div{padding:.6rem .8rem}.tile b{display:block;font-weight:600}
.price{color:#2a7d4f;font-weight:600}button,select{font:inherit;padding:.55rem 1rem;border-radius:8px;border:1px solid #c9ced8;background:#fff}
button.primary{background:#2a7d4f;border-color:#2a7d4f;color:#fff;cursor:pointer}
.product{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:2rem}.product img{width:100%;border-radius:12px}
@media (max-width:640px){.product{grid-template-columns:1fr;gap:1rem}}
table{width:100%;border-collapse:collapse;background:#fff;border-radius:12px;overflow:hidden}td,th{padding:.6rem;text-align:left;border-bottom:1px solid #eef}
.note{background:#fff8e1;border-radius:8px;padding:.6rem .9rem;font-size:.9rem}
.search{position:relative}.search input{font:inherit;padding:.4rem .7rem;border-radius:8px;border:0;width:min(260px,60vw)}
#results{position:absolute;right:0;top:2.4rem;width:min(340px,90vw);background:#fff;color:#1d2330;border-radius:10px;box-shadow:0 6px 24px #0003;z-index:9;padding:.4rem}
#results:empty{display:none}#results button,#results a{display:flex;gap:.6rem;align-items:center;width:100%;border:0;background:none;padding:.35rem .5rem;text-align:left;color:inherit;text-decoration:none;border-radius:6px}
#results button:hover,#results a:hover{background:#f0f2f5}#results img{width:32px;height:32px;border-radius:4px}
.shelf{margin-top:2rem}.shelf[aria-busy=true]{opacity:.6}`

// The client-side cart, shared by every page: one copy of this code, inlined where needed.
// Every change sends update-cart with the whole cart (SPEC "Event kinds").
const CART_SCRIPT = `
const cart = {
  lines: () => JSON.parse(localStorage.getItem('demo-cart') || '[]'),
  save(lines) {
    localStorage.setItem('demo-cart', JSON.stringify(lines))
    discoveryFeedback('update-cart', { line_items: lines })
    cart.count()
  },
  add(line) {
    const lines = cart.lines()
    const same = lines.find((other) => other.variant_item_id == line.variant_item_id)
    if (same) same.quantity += line.quantity
    else lines.push(line)
    cart.save(lines)
  },
  count() {
    const count = cart.lines().reduce((sum, line) => sum + line.quantity, 0)
    document.getElementById('cart-count').textContent = count ? '(' + count + ')' : ''
  }
}
cart.count()`

// Autocomplete and shelves through the discovery client. Their clicks are tracked without a
// rid in the code: the client fills in the rid of the response that showed the item.
const DISCOVERY_SCRIPT = `
let client
const discovery = () => (client ||= discoveryFeedbackClient.createClient({ key: KEY, baseUrl: '' }))
const search = document.getElementById('search')
const results = document.getElementById('results')
const link = (item) => {
  const a = document.createElement('a')
  a.href = item.product_url
  a.dataset.dfItemId = item.id
  // Autocomplete items name no variants: before one is chosen, the product id stands for it.
  a.dataset.dfVariantId = (item.variants_ids && item.variants_ids[0]) || item.id
  const img = document.createElement('img')
  img.src = item.thumbnail_url
  img.alt = ''
  a.append(img, item.title)
  return a
}
search.addEventListener('input', () => {
  const q = search.value.trim()
  if (!q) return results.replaceChildren()
  discovery().autocomplete({ q, suggestion_limit: 4, item_limit: 4 }).then((answer) => {
    if (search.value.trim() != q) return
    results.replaceChildren(
      ...answer.suggestions.map((suggestion) => {
        const button = document.createElement('button')
        button.className = 'suggestion'
        button.textContent = '🔍 ' + suggestion.value
        button.onclick = () => {
          discoveryFeedback('click-suggestion', { suggestion: suggestion.value })
          search.value = suggestion.value
          search.dispatchEvent(new Event('input'))
        }
        return button
      }),
      ...answer.items.map(link)
    )
  }, (error) => console.warn(error.message))
})
// A recommendation shelf: a store of the client fills it, and every change of its state
// shows: a visible loading line, the tiles, or nothing when the service failed. \`tile\`
// builds one tile; by default a link whose data-df-* attributes track the click.
function shelf(id, title, tile = (item) => Object.assign(link(item), { className: 'tile' })) {
  const store = discoveryFeedbackClient.createRecommendations(discovery(), { onError: (error) => console.warn(error.message) })
  const holder = document.getElementById(id)
  if (!holder) return store
  const render = () => {
    const { status, items } = store.getState()
    const heading = document.createElement('h2')
    heading.textContent = title
    const body = document.createElement(items.length ? 'div' : 'p')
    if (items.length) {
      body.className = 'grid'
      body.append(...items.map(tile))
    } else body.textContent = status == 'loading' ? 'Loading recommendations…' : 'Nothing to recommend yet.'
    holder.setAttribute('aria-busy', status == 'loading')
    holder.replaceChildren(...(status == 'error' && !items.length ? [] : [heading, body]))
  }
  store.subscribe(render)
  render()
  return store
}`

const STUB = `<script>window.discoveryFeedback=typeof discoveryFeedback=="function"?discoveryFeedback:function(){(discoveryFeedback.q=discoveryFeedback.q||[]).push(arguments)};</script>`

/** A store page: the stub and its early calls, then the async script tags (tracker, declarative add-on), as README shows. */
function page(context, title, body, { early = '', scripts = '' } = {}) {
  return `<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escape(title)} · Demo store</title><style>${CSS}</style>
${STUB}${early ? `<script>${early}</script>` : ''}
<script async src="/discovery-feedback.min.js" data-key="${escape(context.key)}" data-endpoint="${escape(context.endpoint)}"></script>
<script async src="/discovery-feedback-declarative.min.js"></script>
<script src="/discovery-feedback-client.min.js"></script>
<header><strong>Demo store</strong><span class="search"><input id="search" type="search" placeholder="Search products" autocomplete="off"><span id="results"></span></span><a href="/">Home</a><a href="/cart">Cart <span id="cart-count"></span></a><a href="/spa">SPA</a><a href="/inspector" target="_blank">Inspector</a></header>
<main>${body}</main>
<footer>Every click here is an event: watch them arrive, validated, in the <a href="/inspector" target="_blank">inspector</a>.</footer>
<script>const KEY = ${data(context.key)}${CART_SCRIPT}${DISCOVERY_SCRIPT}${scripts}</script></html>`
}

const tile = (product, extra = '') => `<a class="tile" href="/product/${escape(product.id)}" data-item-id="${escape(product.id)}" data-variant-id="${escape(product.variants[0].id)}">
<img src="${escape(product.image)}" alt=""><div><b>${escape(product.title)}</b><span class="price">${money(product.price)}</span>${extra}</div></a>`

function home(context) {
  // The shop's own listing, not a service response: click-item goes without a rid (SPEC).
  const scripts = `
document.querySelector('.grid').addEventListener('click', (event) => {
  const link = event.target.closest('a.tile')
  if (link) discoveryFeedback('click-item', { item_id: link.dataset.itemId, variant_item_id: link.dataset.variantId })
})`
  return page(context, 'Home', `<h1>New season</h1><div class="grid">${catalog.map((product) => tile(product)).join('')}</div><section class="shelf" id="newest"></section>`, {
    scripts: scripts + `\nshelf('newest', 'Newest').emit('newest', { limit: 6 })`
  })
}

function product(context, item) {
  const options = item.variants.map((variant) => `<option value="${escape(variant.id)}">${escape(variant.title)}</option>`).join('')
  // The product page describes itself: queued before the script loads, this view-page
  // replaces the automatic one.
  const early = `discoveryFeedback('view-page', ${data({ item_id: item.id, variant_item_id: item.variants[0].id })})`
  const scripts = `
const item = ${data({ id: item.id, price: item.price })}
document.getElementById('add').addEventListener('click', () => {
  // The page's own button: the cart changes (update-cart); add-to-cart is only for the service's widgets.
  cart.add({ item_id: item.id, variant_item_id: document.getElementById('variant').value, unit_price: item.price, quantity: 1 })
  document.getElementById('added').hidden = false
})
// The two shelves of a product page, each a store: viewed together, bought together.
shelf('also-viewed', 'Shoppers who viewed this also viewed').emit('viewed', { item_id: item.id, limit: 6 })
shelf('also-bought', 'Shoppers who viewed this also bought').emit('bought', { item_id: item.id, limit: 6 })`
  const body = `<div class="product"><img src="${escape(item.image)}" alt="">
<div><h1>${escape(item.title)}</h1><p class="price">${money(item.price)}</p>
<p><label>Size <select id="variant">${options}</select></label></p>
<p><button class="primary" id="add">Add to cart</button> <span id="added" hidden>Added. <a href="/cart">Go to cart</a></span></p></div></div>
<section class="shelf" id="also-viewed"></section><section class="shelf" id="also-bought"></section>`
  return page(context, item.title, body, { early, scripts })
}

function cartPage(context) {
  const scripts = `
const byId = ${data(Object.fromEntries(catalog.map((product) => [product.id, { title: product.title, price: product.price }])))}
function render() {
  const lines = cart.lines()
  const rows = document.getElementById('lines')
  rows.replaceChildren(...lines.map((line) => {
    const row = document.createElement('tr')
    const name = document.createElement('td')
    name.textContent = byId[line.item_id].title + ' · ' + line.variant_item_id
    const quantity = document.createElement('td')
    for (const [label, change] of [['−', -1], ['+', 1]]) {
      const button = document.createElement('button')
      button.textContent = label
      button.className = change < 0 ? 'less' : 'more'
      button.onclick = () => {
        const next = cart.lines().map((other) => other.variant_item_id == line.variant_item_id ? { ...other, quantity: other.quantity + change } : other)
        cart.save(next.filter((other) => other.quantity > 0))
        render()
      }
      quantity.append(button)
    }
    quantity.insertBefore(document.createTextNode(' ' + line.quantity + ' '), quantity.lastChild)
    const total = document.createElement('td')
    total.textContent = '€' + (line.unit_price * line.quantity).toFixed(2)
    row.append(name, quantity, total)
    return row
  }))
  document.getElementById('empty').hidden = lines.length > 0
  document.getElementById('checkout').disabled = !lines.length
  document.querySelector('input[name=cart]').value = JSON.stringify(lines)
  recommend(lines)
}
// The cart's shelf, a store: what is bought together with the cart's items, trending while
// the cart is empty. Asked again when the cart's items change; a newer ask supersedes.
// Its tiles are the service's widgets, with add-to-cart buttons (SPEC "Event kinds").
let asked
const cartShelf = shelf('shelf', 'Recommended for you', (item) => {
  const tile = document.createElement('div')
  tile.className = 'tile'
  tile.dataset.itemId = item.id
  tile.dataset.variantId = item.variants_ids[0] || item.id
  const img = document.createElement('img')
  img.src = item.image_url
  img.alt = ''
  const text = document.createElement('div')
  const title = document.createElement('b')
  title.textContent = item.title
  const price = document.createElement('span')
  price.className = 'price'
  price.textContent = '€' + item.price[0].toFixed(2)
  const button = document.createElement('button')
  button.className = 'shelf-add'
  button.textContent = 'Add to cart'
  text.append(title, price, button)
  tile.append(img, text)
  return tile
})
function recommend(lines) {
  const ids = [...new Set(lines.map((line) => line.item_id))]
  if (String(ids) == asked) return
  asked = String(ids)
  if (ids.length) cartShelf.emit('frequentlyPurchased', { item_ids: ids, limit: 4 })
  else cartShelf.emit('trending', { limit: 4 })
}
// SPEC: update-cart on the cart page, with the whole cart.
discoveryFeedback('update-cart', { line_items: cart.lines() })
render()
document.getElementById('shelf').addEventListener('click', (event) => {
  const button = event.target.closest('button.shelf-add')
  if (!button) return
  const { itemId, variantId } = button.closest('.tile').dataset
  // A widget of the service: add-to-cart, whose rid the client fills in from the answer that
  // showed the item (the library adds its click-item).
  discoveryFeedback('add-to-cart', { item_id: itemId, variant_item_id: variantId, quantity: 1 })
  cart.add({ item_id: itemId, variant_item_id: variantId, unit_price: byId[itemId].price, quantity: 1 })
  render()
})`
  const body = `<h1>Your cart</h1><table><tbody id="lines"></tbody></table><p id="empty">Your cart is empty.</p>
<form method="post" action="/checkout"><input type="hidden" name="cart"><button class="primary" id="checkout">Checkout</button></form>
<section class="shelf" id="shelf"></section>`
  return page(context, 'Cart', body, { scripts })
}

function orderPage(context, order) {
  // Written the way a checkout template writes it: the server renders the order's data into
  // one manual call. Amounts are numbers, not strings.
  const scripts = `
localStorage.removeItem('demo-cart')
cart.count()
discoveryFeedback('purchase', {
  order_id: ${data(order.id)},
  currency: 'EUR',
  revenue: ${order.revenue},
  total_tax: ${order.tax},
  total_shipping: ${order.shipping},
  line_items: ${data(order.lines)}
})`
  const rows = order.lines
    .map((line) => `<tr><td>${escape(byId.get(line.item_id).title)}</td><td>${line.quantity}</td><td>${money(line.unit_price * line.quantity)}</td></tr>`)
    .join('')
  const body = `<h1>Thank you!</h1><p>Order <b id="order-id">${escape(order.id)}</b> is confirmed.</p>
<table>${rows}<tr><td>Shipping</td><td></td><td>${money(order.shipping)}</td></tr><tr><th>Total (incl. ${money(order.tax)} VAT)</th><td></td><th>${money(order.revenue)}</th></tr></table>`
  return page(context, 'Order confirmed', body, { scripts })
}

/** Turns the posted cart into an order, with prices from the catalog rather than the browser. */
function placeOrder(form) {
  let posted = []
  try {
    posted = JSON.parse(new URLSearchParams(form).get('cart') || '[]')
  } catch {
    // An unreadable cart is an empty order.
  }
  const lines = (Array.isArray(posted) ? posted : [])
    // Strict comparisons only: String() or == of an object the shopper posted can throw.
    .map((line) => ({ line, item: line && typeof line.item_id != 'object' ? byId.get(String(line.item_id)) : undefined }))
    .filter(({ line, item }) => item && item.variants.some((variant) => variant.id === line.variant_item_id) && Number.isInteger(line.quantity) && line.quantity > 0)
    .map(({ line, item }) => ({ item_id: item.id, variant_item_id: line.variant_item_id, unit_price: item.price, quantity: Math.min(line.quantity, 99) }))
  const subtotal = cents(lines.reduce((sum, line) => sum + line.unit_price * line.quantity, 0))
  const shipping = subtotal >= 50 || !lines.length ? 0 : 4.9
  const revenue = cents(subtotal + shipping)
  const order = { id: 'o-' + randomUUID().slice(0, 8), lines, shipping, revenue, tax: cents((revenue * 19) / 119) }
  orders.set(order.id, order)
  // The oldest orders go, so that posting checkouts cannot fill the memory.
  if (orders.size > MAX_ORDERS) orders.delete(orders.keys().next().value)
  return order
}

function spa(context) {
  // An app that imports the ES module; the library sends one view-page per route by itself.
  return `<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>SPA · Demo store</title><style>${CSS}</style>
<script type="importmap">{"imports":{"discovery-feedback":"/esm/index.mjs","nanoid":"/esm/nanoid.js","js-cookie":"/esm/js-cookie.mjs"}}</script>
<header><strong>Demo store · SPA</strong><a data-route href="/spa">Start</a><a data-route href="/spa/new">New</a><a data-route href="/spa/sale">Sale</a><a data-route href="/spa/about">About</a><a href="/">Store</a><a href="/inspector" target="_blank">Inspector</a></header>
<main id="app"></main>
<footer>Each route is a view-page with the previous URL as ref: see the <a href="/inspector" target="_blank">inspector</a>.</footer>
<script type="module">
import { createTracker } from 'discovery-feedback'
window.tracker = createTracker(${data({ key: context.key, endpoint: context.endpoint })})
const routes = {
  '/spa': ['Start', 'A single-page app: routes change with history.pushState, no page loads.'],
  '/spa/new': ['New arrivals', 'Fresh in this week.'],
  '/spa/sale': ['Sale', 'Up to 40% off.'],
  '/spa/about': ['About', 'This page is rendered in the browser.']
}
function render() {
  const [title, text] = routes[location.pathname] || ['Not found', 'No such route.']
  const heading = document.createElement('h1')
  heading.textContent = title
  const paragraph = document.createElement('p')
  paragraph.textContent = text
  document.getElementById('app').replaceChildren(heading, paragraph)
}
document.addEventListener('click', (event) => {
  const link = event.target.closest('a[data-route]')
  if (!link) return
  event.preventDefault()
  history.pushState(null, '', link.href)
  render()
})
addEventListener('popstate', render)
render()
</script></html>`
}

const html = (response, status, body) => response.writeHead(status, { 'content-type': 'text/html; charset=utf-8' }).end(body)

/** The posted form, at most `limit` characters of it kept. */
function readForm(request, limit) {
  return new Promise((resolve, reject) => {
    let form = ''
    request.setEncoding('utf8')
    request.on('data', (chunk) => {
      if (form.length < limit) form += chunk
    })
    request.on('end', () => resolve(form))
    request.on('error', reject)
  })
}

/** Answers the store's routes; resolves false for anything else. */
export async function handleStore(request, response, context) {
  const path = request.url.split('?')[0]
  if (STATIC[path]) {
    response.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(readFileSync(new URL(STATIC[path], import.meta.url)))
    return true
  }
  if (request.method == 'POST' && path == '/checkout') {
    const order = placeOrder(await readForm(request, 100000))
    response.writeHead(303, { location: '/order/' + order.id }).end()
    return true
  }
  if (request.method != 'GET') return false
  const productMatch = path.match(/^\/product\/([\w-]+)$/)
  const orderMatch = path.match(/^\/order\/([\w-]+)$/)
  if (path == '/') html(response, 200, home(context))
  else if (productMatch) {
    const item = byId.get(productMatch[1])
    html(response, item ? 200 : 404, item ? product(context, item) : page(context, 'Not found', '<h1>No such product</h1>'))
  } else if (path == '/cart') html(response, 200, cartPage(context))
  else if (orderMatch && orders.has(orderMatch[1])) html(response, 200, orderPage(context, orders.get(orderMatch[1])))
  else if (path == '/spa' || path.startsWith('/spa/')) html(response, 200, spa(context))
  else return false
  return true
}
