// This module serves the demo store: the pages a shop would have, each using the library the
// way a shop would. Listing and product pages use the script tag, the cart adds a recommendation
// shelf, the confirmation page writes its purchase the way a checkout template does, and /spa
// imports the ES module and navigates with pushState. The pages' own scripts and styles are
// static files in demo/store/. The Shopify-style checkout (/checkouts) ends on a thank-you page
// where, as on Shopify's, the storefront's script tag does not run: the purchase comes from the
// custom pixel, run by the pixel host of demo/shopify/.
import { randomInt, randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { readBody } from './request-body.mjs'
import { checkoutOf } from './shopify/checkout.mjs'
import { customPixelCode } from '../dist/collector.mjs'

const catalog = JSON.parse(readFileSync(new URL('./catalog.json', import.meta.url), 'utf8'))
const byId = new Map(catalog.map((product) => [product.id, product]))
const orders = new Map()
const MAX_ORDERS = 1000

const JS = 'text/javascript; charset=utf-8'
const CSS = 'text/css; charset=utf-8'

// These are all the files the store serves from disk: each request path with its file and content
// type. A request's path is looked up here whole and never joined onto a folder, so it cannot
// reach any other file. The files are read per request, so a rebuild or an edit shows without a
// restart.
const FILES = new Map(
  [
    ['/discovery-feedback.min.js', '../dist/discovery-feedback.min.js', JS],
    ['/discovery-feedback-client.min.js', '../dist/discovery-feedback-client.min.js', JS],
    ['/discovery-feedback-declarative.min.js', '../dist/discovery-feedback-declarative.min.js', JS],
    ['/esm/index.mjs', '../dist/index.mjs', JS],
    ['/esm/nanoid.js', '../node_modules/nanoid/index.browser.js', JS],
    ['/esm/url-alphabet/index.js', '../node_modules/nanoid/url-alphabet/index.js', JS],
    ['/store/store.css', './store/store.css', CSS],
    ['/store/cart.js', './store/cart.js', JS],
    ['/store/search-and-shelves.js', './store/search-and-shelves.js', JS],
    ['/store/home.js', './store/home.js', JS],
    ['/store/product.js', './store/product.js', JS],
    ['/store/cart-page.js', './store/cart-page.js', JS],
    ['/store/spa.mjs', './store/spa.mjs', JS],
    ['/shopify/host.js', './shopify/host.js', JS],
    ['/shopify/sandbox-runtime.js', './shopify/sandbox-runtime.js', JS],
    ['/shopify/thank-you.js', './shopify/thank-you.js', JS]
  ].map(([path, file, type]) => [path, { file: new URL(file, import.meta.url), type }])
)

// A checkout form may hold this many characters.
const MAX_FORM_CHARACTERS = 100000

const escape = (text) => String(text).replace(/[&<>"']/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char])
// `data` writes a value into a <script> element as JSON, with `<` escaped so that no value can
// close the element.
const data = (value) => JSON.stringify(value).replace(/</g, '\\u003c')
const money = (amount) => '€' + amount.toFixed(2)
const cents = (amount) => Math.round(amount * 100) / 100

// The stub is README's snippet: it queues the calls a page makes before the tracker has loaded.
const STUB = `<script>window.discoveryFeedback=typeof discoveryFeedback=="function"?discoveryFeedback:function(){(discoveryFeedback.q=discoveryFeedback.q||[]).push(arguments)};</script>`

/**
 * Returns a store page: the stub and its early calls, then the async script tags (the tracker and
 * the declarative add-on), as README shows. The page's data block holds the API key and `values`,
 * for the static scripts to read; `script` is the page's own script element.
 */
function page(context, title, body, { early = '', values = {}, script = '' } = {}) {
  return `<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escape(title)} · Demo store</title><link rel="stylesheet" href="/store/store.css">
${STUB}${early ? `<script>${early}</script>` : ''}
<script async src="/discovery-feedback.min.js" data-key="${escape(context.key)}" data-endpoint="${escape(context.endpoint)}"></script>
<script async src="/discovery-feedback-declarative.min.js"></script>
<script src="/discovery-feedback-client.min.js"></script>
<header><strong>Demo store</strong><span class="search"><input id="search" type="search" placeholder="Search products" autocomplete="off"><span id="results"></span></span><a href="/">Home</a><a href="/cart">Cart <span id="cart-count"></span></a><a href="/spa">SPA</a><a href="${escape(context.inspectorLink)}" target="_blank">Inspector</a></header>
<main>${body}</main>
<footer>Every click here is an event: watch them arrive, validated, in the <a href="${escape(context.inspectorLink)}" target="_blank">inspector</a>.</footer>
<script type="application/json" id="store-data">${data({ key: context.key, ...values })}</script>
<script src="/store/cart.js"></script>
<script src="/store/search-and-shelves.js"></script>
${script}</html>`
}

const tile = (
  product,
  extra = ''
) => `<a class="tile" href="/product/${escape(product.id)}" data-item-id="${escape(product.id)}" data-variant-id="${escape(product.variants[0].id)}">
<img src="${escape(product.image)}" alt=""><div><b>${escape(product.title)}</b><span class="price">${money(product.price)}</span>${extra}</div></a>`

function home(context) {
  return page(
    context,
    'Home',
    `<h1>New season</h1><div class="grid">${catalog.map((product) => tile(product)).join('')}</div><section class="shelf" id="newest"></section>`,
    {
      script: '<script src="/store/home.js"></script>'
    }
  )
}

function product(context, item) {
  const options = item.variants.map((variant) => `<option value="${escape(variant.id)}">${escape(variant.title)}</option>`).join('')
  // The product page describes itself. Queued before the script loads, this view-page replaces
  // the automatic one.
  const early = `discoveryFeedback('view-page', ${data({ item_id: item.id, variant_item_id: item.variants[0].id })})`
  const body = `<div class="product"><img src="${escape(item.image)}" alt="">
<div><h1>${escape(item.title)}</h1><p class="price">${money(item.price)}</p>
<p><label>Size <select id="variant">${options}</select></label></p>
<p><button class="primary" id="add">Add to cart</button> <span id="added" hidden>Added. <a href="/cart">Go to cart</a></span></p></div></div>
<section class="shelf" id="also-viewed"></section><section class="shelf" id="also-bought"></section>`
  return page(context, item.title, body, { early, values: { item: { id: item.id, price: item.price } }, script: '<script src="/store/product.js"></script>' })
}

// The cart page's script reads the title and price of every product from the page's data block.
const cartProducts = Object.fromEntries(catalog.map((product) => [product.id, { title: product.title, price: product.price }]))

function cartPage(context) {
  const body = `<h1>Your cart</h1><table><tbody id="lines"></tbody></table><p id="empty">Your cart is empty.</p>
<form method="post" action="/checkout"><input type="hidden" name="cart"><button class="primary" id="checkout">Checkout</button>
<button id="checkout-shopify" formaction="/checkouts">Checkout (Shopify pixel)</button></form>
<section class="shelf" id="shelf"></section>`
  return page(context, 'Cart', body, { values: { products: cartProducts }, script: '<script src="/store/cart-page.js"></script>' })
}

function orderPage(context, order) {
  // This script stays inline, written the way a checkout template writes it: the server renders
  // the order's data into one manual call. Amounts are numbers, not strings.
  const purchase = `
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
  return page(context, 'Order confirmed', body, { script: `<script>${purchase}</script>` })
}

/**
 * Returns Shopify's thank-you page for `order`. Like Shopify's, it runs no theme script, so no
 * storefront script tag: the store's pixel host (demo/shopify/host.js) runs the custom pixel a
 * merchant would paste (src/collector/custom-pixel.ts makes it) in the lax sandbox, and publishes
 * page_viewed and checkout_completed. The pixel has no shop origin to resolve a path against, so its endpoint
 * is the collector's absolute URL, made from the request's Host.
 */
function thankYouPage(context, order, host) {
  const endpoint = 'http://' + host + context.endpoint
  const checkout = checkoutOf({
    id: order.shopifyId,
    token: order.id,
    currency: 'EUR',
    lines: order.lines.map((line) => {
      const item = byId.get(line.item_id)
      const variant = item.variants.find((one) => one.id == line.variant_item_id)
      return {
        productId: item.id,
        variantId: line.variant_item_id,
        title: item.title,
        variantTitle: variant.title,
        price: line.unit_price,
        quantity: line.quantity
      }
    }),
    shipping: order.shipping,
    tax: order.tax
  })
  const rows = order.lines
    .map((line) => `<tr><td>${escape(byId.get(line.item_id).title)}</td><td>${line.quantity}</td><td>${money(line.unit_price * line.quantity)}</td></tr>`)
    .join('')
  return `<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Thank you · Demo store checkout</title><link rel="stylesheet" href="/store/store.css">
<header><strong>Demo store · Checkout</strong><a href="/">Continue shopping</a><a href="${escape(context.inspectorLink)}" target="_blank">Inspector</a></header>
<main><h1>Thank you!</h1><p>Order <b id="order-id">${escape(order.shopifyId)}</b> is confirmed.</p>
<table>${rows}<tr><td>Shipping</td><td></td><td>${money(order.shipping)}</td></tr><tr><th>Total (incl. ${money(order.tax)} VAT)</th><td></td><th>${money(order.revenue)}</th></tr></table>
<p>This page runs no storefront script: the purchase is sent by the custom pixel, in Shopify's lax sandbox.</p></main>
<script type="application/json" id="pixel-data">${data({ code: customPixelCode({ key: context.key, endpoint }), checkout })}</script>
<script type="module" src="/shopify/thank-you.js"></script></html>`
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
    // The checks compare strictly, since String() or == of an object the shopper posted can throw.
    .map((line) => ({ line, item: line && typeof line.item_id != 'object' ? byId.get(String(line.item_id)) : undefined }))
    .filter(
      ({ line, item }) => item && item.variants.some((variant) => variant.id === line.variant_item_id) && Number.isInteger(line.quantity) && line.quantity > 0
    )
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
  // This is an app that imports the ES module; the library sends one view-page per route by itself.
  return `<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>SPA · Demo store</title><link rel="stylesheet" href="/store/store.css">
<script type="importmap">{"imports":{"discovery-feedback":"/esm/index.mjs","nanoid":"/esm/nanoid.js"}}</script>
<header><strong>Demo store · SPA</strong><a data-route href="/spa">Start</a><a data-route href="/spa/new">New</a><a data-route href="/spa/sale">Sale</a><a data-route href="/spa/about">About</a><a href="/">Store</a><a href="${escape(context.inspectorLink)}" target="_blank">Inspector</a></header>
<main id="app"></main>
<footer>Each route is a view-page with the previous URL as ref: see the <a href="${escape(context.inspectorLink)}" target="_blank">inspector</a>.</footer>
<script type="application/json" id="store-data">${data({ key: context.key, endpoint: context.endpoint })}</script>
<script type="module" src="/store/spa.mjs"></script></html>`
}

// The thank-you page's pixel posts to the host the shopper asked for. A Host header that is not a
// plain host and port is not written into the page; the address the request came in on is.
const hostOf = (request) =>
  /^[\w.-]+(:\d+)?$/.test(request.headers.host || '') ? request.headers.host : `${request.socket.localAddress}:${request.socket.localPort}`

const html = (response, status, body) => response.writeHead(status, { 'content-type': 'text/html; charset=utf-8' }).end(body)

/** Answers the store's routes; resolves false for anything else. */
export async function handleStore(request, response, context) {
  const path = request.url.split('?')[0]
  const served = FILES.get(path)
  if (served) {
    response.writeHead(200, { 'content-type': served.type }).end(readFileSync(served.file))
    return true
  }
  if (request.method == 'POST' && path == '/checkout') {
    const form = await readBody(request, MAX_FORM_CHARACTERS, { text: true })
    // The rest of a longer form is read and dropped, and its cart makes an empty order.
    if (form == null) request.resume()
    const order = placeOrder(form ?? '')
    response.writeHead(303, { location: '/order/' + order.id }).end()
    return true
  }
  if (request.method == 'POST' && path == '/checkouts') {
    const form = await readBody(request, MAX_FORM_CHARACTERS, { text: true })
    if (form == null) request.resume()
    const order = placeOrder(form ?? '')
    // Shopify gives pixels the order's id as a gid; its thank-you URL carries the checkout's token.
    order.shopifyId = 'gid://shopify/OrderIdentity/' + randomInt(1e12, 1e13)
    response.writeHead(303, { location: '/checkouts/cn/' + order.id + '/thank-you' }).end()
    return true
  }
  if (request.method != 'GET') return false
  const productMatch = path.match(/^\/product\/([\w-]+)$/)
  const orderMatch = path.match(/^\/order\/([\w-]+)$/)
  const thankYouMatch = path.match(/^\/checkouts\/cn\/([\w-]+)\/thank-you$/)
  if (path == '/') html(response, 200, home(context))
  else if (productMatch) {
    const item = byId.get(productMatch[1])
    html(response, item ? 200 : 404, item ? product(context, item) : page(context, 'Not found', '<h1>No such product</h1>'))
  } else if (path == '/cart') html(response, 200, cartPage(context))
  else if (orderMatch && orders.has(orderMatch[1])) html(response, 200, orderPage(context, orders.get(orderMatch[1])))
  else if (thankYouMatch && orders.get(thankYouMatch[1])?.shopifyId) html(response, 200, thankYouPage(context, orders.get(thankYouMatch[1]), hostOf(request)))
  else if (path == '/spa' || path.startsWith('/spa/')) html(response, 200, spa(context))
  else return false
  return true
}
