// This module emulates the part of Shopify that runs a Web Pixel on a shop's page. It runs in the
// top frame, the shop's own page, on the shop's origin.
//
// What it mirrors of Shopify:
// - A custom pixel (pasted in Settings → Customer events) runs in the "lax" sandbox, an
//   <iframe sandbox="allow-scripts"> whose origin is opaque: the pixel's document.cookie and
//   localStorage are not the shop's, and reading them throws. Its code runs inside a function
//   with `api`, `analytics`, `browser` and `init` in scope.
// - An app pixel runs in the "strict" sandbox, a Web Worker: no window, no document. Its bundle
//   calls register() from @shopify/web-pixels-extension, which calls shopify.extend.
// - In both, the pixel's fetches come from an opaque origin, so they carry `Origin: null`.
// - The Standard API's browser.* methods run in the top frame, asynchronously: each call is a
//   message to this page, which runs it on its own document.cookie, localStorage and
//   sessionStorage and answers.
// - Events are published with the fields of Shopify's event objects (id, clientId, name, seq,
//   timestamp, type, context, data), the context taken from this page.
//
// What it does not reproduce:
// - The pixel manager's own consent gate: Shopify holds an app pixel's callbacks until the
//   visitor's consent allows them, then replays the events. Here every event is delivered, and
//   the pixel reads init.customerPrivacy and the consent events itself.
// - The events Shopify publishes by itself (page_viewed on every page, the DOM events, the
//   checkout's steps): the page publishes each event it wants, with publish().
// - Shopify's Content-Security-Policy, the iframe's served URL on Shopify's CDN, the limits on
//   what a strict pixel may call, and the exact formats of event ids and client ids.
// - browser.sendBeacon runs navigator.sendBeacon in this page, so its requests carry this page's
//   origin; Shopify marks it deprecated in favour of fetch with keepalive.
/* global document, window, navigator, localStorage, sessionStorage, location, crypto, Worker, MessageChannel */
import { sandboxRuntime } from './sandbox-runtime.js'

const RUNTIME = `(${sandboxRuntime})()`

/** Returns a random UUID, also where crypto.randomUUID is missing (a page served over plain http to another machine). */
function uuid() {
  if (crypto.randomUUID) return crypto.randomUUID()
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  bytes[6] = (bytes[6] & 0x0f) | 0x40
  bytes[8] = (bytes[8] & 0x3f) | 0x80
  const hex = [...bytes].map((byte) => byte.toString(16).padStart(2, '0')).join('')
  return [hex.slice(0, 8), hex.slice(8, 12), hex.slice(12, 16), hex.slice(16, 20), hex.slice(20)].join('-')
}

/** Returns the value of the page's cookie `name` as document.cookie shows it, or '' if there is none. */
function readCookie(name) {
  const found = document.cookie.split('; ').find((pair) => pair.slice(0, pair.indexOf('=')) == name)
  return found ? found.slice(found.indexOf('=') + 1) : ''
}

const locationOf = (where) => ({
  hash: where.hash,
  host: where.host,
  hostname: where.hostname,
  href: where.href,
  origin: where.origin,
  pathname: where.pathname,
  port: where.port,
  protocol: where.protocol,
  search: where.search
})

/** Returns this page's Context, the fields of Shopify's Context type, as an event's `context` carries it. */
export function pageContext() {
  return {
    document: { characterSet: document.characterSet, location: locationOf(document.location), referrer: document.referrer, title: document.title },
    navigator: { cookieEnabled: navigator.cookieEnabled, language: navigator.language, languages: [...navigator.languages], userAgent: navigator.userAgent },
    window: {
      innerHeight: window.innerHeight,
      innerWidth: window.innerWidth,
      location: locationOf(location),
      origin: window.origin,
      outerHeight: window.outerHeight,
      outerWidth: window.outerWidth,
      pageXOffset: window.pageXOffset,
      pageYOffset: window.pageYOffset,
      screen: { height: window.screen.height, width: window.screen.width },
      screenX: window.screenX,
      screenY: window.screenY,
      scrollX: window.scrollX,
      scrollY: window.scrollY
    }
  }
}

// With no consent banner, as in a region where Shopify asks for none, every purpose is allowed.
const ALLOWED = { analyticsProcessingAllowed: true, marketingAllowed: true, preferencesProcessingAllowed: true, saleOfDataAllowed: true }

const storageMethods = (storage) => ({
  clear: () => storage.clear(),
  getItem: (key) => storage.getItem(key),
  key: (index) => storage.key(index),
  length: () => storage.length,
  removeItem: (key) => storage.removeItem(key),
  // Storage keeps text; String() is what the native setItem would do to the value.
  setItem: (key, value) => storage.setItem(key, String(value))
})

// These are the only methods a sandbox may ask the top frame to run, by name.
const BROWSER = {
  'cookie.get': (name) => (name === undefined ? document.cookie : readCookie(String(name))),
  'cookie.set': (cookieOrName, value) => {
    // One argument is a whole document.cookie assignment, attributes included; two are a name and a value.
    const text = value === undefined ? String(cookieOrName) : cookieOrName + '=' + value
    document.cookie = text
    return text
  },
  ...Object.fromEntries(Object.entries(storageMethods(localStorage)).map(([name, method]) => ['localStorage.' + name, method])),
  ...Object.fromEntries(Object.entries(storageMethods(sessionStorage)).map(([name, method]) => ['sessionStorage.' + name, method])),
  sendBeacon: (url, body) => navigator.sendBeacon(url, body)
}

/**
 * Starts a pixel in a sandbox, the way Shopify's pixel manager does, and returns the handle the
 * page publishes events through.
 *
 * - `sandbox`: 'lax' runs `code` as a custom pixel, in an <iframe sandbox="allow-scripts">; 'strict'
 *   runs it as an app pixel's bundle (a classic script that calls shopify.extend) in a Web Worker.
 * - `code`: the pixel's code, as text.
 * - `init`: the RegisterInit the pixel gets as api.init. Its `context` defaults to this page's, its
 *   `customerPrivacy` to everything allowed, and its `data` to no customer, no cart and `shop`.
 * - `settings`: api.settings, the app pixel's settings (custom pixels have none).
 * - `clientId`: every event's clientId. Shopify keeps it in the `_shopify_y` cookie; this reads that
 *   cookie if the page has one, or makes one up for this host, and never writes it.
 * - `onError(message)`: called with each error the pixel's code throws, also collected in `errors`.
 *
 * publish(name, data, overrides) sends a standard event, with `overrides` replacing any of its
 * fields, and returns the event. setConsent(changes) sends visitorConsentCollected with the
 * consent so far and `changes` merged in. Both queue until the pixel's code has run. `ready`
 * resolves once it has run, or rejects with the error it threw. stop() ends the sandbox.
 */
export function startPixelHost({ sandbox = 'lax', code, init = {}, settings = {}, clientId, onError, shop } = {}) {
  if (sandbox != 'lax' && sandbox != 'strict') throw new TypeError("sandbox must be 'lax' or 'strict'")
  if (typeof code != 'string') throw new TypeError('code must be the pixel code, as text')
  const fullInit = {
    ...init,
    context: init.context ?? pageContext(),
    data: init.data ?? {
      customer: null,
      cart: null,
      shop: shop ?? {
        countryCode: 'DE',
        myshopifyDomain: 'demo-store.myshopify.com',
        name: 'Demo store',
        paymentSettings: { currencyCode: 'EUR' },
        storefrontUrl: location.origin
      },
      purchasingCompany: null
    },
    customerPrivacy: { ...ALLOWED, ...init.customerPrivacy }
  }
  const client = clientId ?? (readCookie('_shopify_y') || uuid())
  let consent = fullInit.customerPrivacy
  let seq = 0
  const errors = []
  const queue = []
  let running = false
  let settle
  const ready = new Promise((resolve, reject) => {
    settle = { resolve, reject }
  })
  // A test that never awaits `ready` should not see an unhandled rejection for a pixel that threw.
  ready.catch(() => {})

  const channel = new MessageChannel()
  const port = channel.port1
  const send = (message) => (running ? port.postMessage(message) : queue.push(message))
  const failed = (message) => {
    errors.push(message)
    if (onError) onError(message)
  }

  port.onmessage = async ({ data }) => {
    if (data.type == 'call') {
      const method = Object.hasOwn(BROWSER, data.method) ? BROWSER[data.method] : null
      try {
        if (!method) throw new Error('No such method: browser.' + data.method)
        port.postMessage({ type: 'reply', id: data.id, value: await method(...data.args) })
      } catch (error) {
        port.postMessage({ type: 'reply', id: data.id, error: String((error && error.message) || error) })
      }
    } else if (data.type == 'ready') {
      running = true
      for (const message of queue.splice(0)) port.postMessage(message)
      if (data.error) {
        failed(data.error)
        settle.reject(new Error(data.error))
      } else settle.resolve()
    } else if (data.type == 'error') failed(data.message)
  }

  const pixelId = String(Math.floor(Math.random() * 1e9))
  const connect = { type: 'connect', sandbox, code, init: fullInit, settings, pixelId }
  let frame
  let worker
  if (sandbox == 'lax') {
    frame = document.createElement('iframe')
    // allow-scripts without allow-same-origin gives the document an opaque origin, as Shopify's
    // custom pixel iframe has. Like Shopify's, it is invisible and out of the tab order.
    frame.setAttribute('sandbox', 'allow-scripts')
    frame.setAttribute('aria-hidden', 'true')
    frame.tabIndex = -1
    frame.name = 'web-pixel-sandbox-CUSTOM-' + pixelId + '-LAX'
    frame.style.cssText = 'position:absolute;width:1px;height:1px;border:0;overflow:hidden;visibility:hidden'
    frame.srcdoc = `<!doctype html><meta charset="utf-8"><script>${RUNTIME}</script>`
    // The runtime listens from its first script, which has run when the iframe's load fires. Its
    // origin is opaque, so '*' is the only target origin that reaches it.
    frame.addEventListener('load', () => frame.contentWindow.postMessage(connect, '*', [channel.port2]), { once: true })
    document.body.append(frame)
  } else {
    // A worker made from a data: URL has an opaque origin (HTML "Dedicated workers", the worker's
    // origin for a data: URL is a new opaque origin), so its fetches carry Origin: null, like those
    // from Shopify's strict sandbox.
    worker = new Worker('data:text/javascript;charset=utf-8,' + encodeURIComponent(RUNTIME), { name: 'web-pixel-sandbox-APP-' + pixelId + '-STRICT' })
    worker.addEventListener('error', (event) => failed(String(event.message || 'the worker failed to start')))
    worker.postMessage(connect, [channel.port2])
  }

  return {
    sandbox,
    ready,
    errors,
    publish(name, data = {}, overrides = {}) {
      seq += 1
      const event = {
        id: 'sh-' + uuid(),
        clientId: client,
        name,
        seq,
        timestamp: new Date().toISOString(),
        type: 'standard',
        context: pageContext(),
        data,
        ...overrides
      }
      send({ type: 'event', event })
      return event
    },
    setConsent(changes) {
      consent = { ...consent, ...changes }
      const payload = { customerPrivacy: consent }
      send({ type: 'consent', name: 'visitorConsentCollected', payload })
      return payload
    },
    stop() {
      port.close()
      if (frame) frame.remove()
      if (worker) worker.terminate()
    }
  }
}
