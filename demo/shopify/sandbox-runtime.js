// This is the side of the pixel host that runs inside the sandbox, in the lax iframe or in the
// strict worker. host.js inlines the source of sandboxRuntime into the iframe's document and into
// the worker's script, so the function must not use anything from this module's scope: it only
// sees the sandbox's own globals.
//
// It builds the Standard API object that Shopify gives a pixel ({ analytics, browser, init,
// customerPrivacy, settings }), runs the pixel's code, and talks to the top frame over the
// MessagePort that the first message brings.
/* global self, window, structuredClone */

/** Runs in the sandbox. It waits for the top frame's `connect` message, which carries the port and the pixel. */
export function sandboxRuntime() {
  const connect = (event) => {
    // In the iframe, only the page that made the iframe may connect; a worker only hears its owner.
    if (typeof window != 'undefined' && event.source !== window.parent) return
    if (!event.data || event.data.type != 'connect' || !event.ports[0]) return
    self.removeEventListener('message', connect)
    run(event.ports[0], event.data)
  }
  self.addEventListener('message', connect)

  function run(port, { sandbox, code, init, settings, pixelId }) {
    const describe = (error) => String((error && error.stack) || error)
    const report = (error) => port.postMessage({ type: 'error', message: describe(error) })
    // An error the pixel's code throws later, in a callback or a promise, is reported to the top
    // frame too, so that a test sees it.
    self.addEventListener('error', (event) => report(event.error || event.message))
    self.addEventListener('unhandledrejection', (event) => report(event.reason))

    // Every browser.* method is a round trip: the top frame runs it on its own document and storage
    // and answers with the result, or with the error's message.
    const pending = new Map()
    let calls = 0
    const call = (method, ...args) =>
      new Promise((resolve, reject) => {
        calls += 1
        pending.set(calls, { resolve, reject })
        try {
          port.postMessage({ type: 'call', id: calls, method, args })
        } catch (error) {
          // An argument that cannot be cloned, a function for example, never leaves the sandbox.
          pending.delete(calls)
          reject(error)
        }
      })
    const storage = (area) => ({
      clear: () => call(area + '.clear'),
      getItem: (key) => call(area + '.getItem', key),
      key: (index) => call(area + '.key', index),
      length: () => call(area + '.length'),
      removeItem: (key) => call(area + '.removeItem', key),
      setItem: (key, value) => call(area + '.setItem', key, value)
    })

    // Subscribers are matched by the event's name, or by the groups Shopify names: all_events takes
    // every event, all_standard_events, all_custom_events and all_dom_events one type each.
    const GROUPS = { all_events: null, all_standard_events: 'standard', all_custom_events: 'custom', all_dom_events: 'dom' }
    const matches = (name, event) => name == event.name || (name in GROUPS && (GROUPS[name] == null || GROUPS[name] == event.type))
    // The events seen so far. Shopify's pixels load after the page's first events have happened and
    // still receive them, so a subscriber that comes late is given the earlier events first.
    const seen = []
    const subscribers = new Set()
    const deliver = (subscriber, event) => {
      if (!matches(subscriber.name, event)) return
      try {
        // Each subscriber gets its own copy, so that one changing its event changes no other's.
        subscriber.callback(structuredClone(event))
      } catch (error) {
        report(error)
      }
    }
    const subscribe = (name, callback) => {
      const subscriber = { name: String(name), callback }
      subscribers.add(subscriber)
      for (const event of seen.slice()) deliver(subscriber, event)
      return () => subscribers.delete(subscriber)
    }
    // Consent changes go to those subscribed at the time; there is nothing to replay.
    const consentSubscribers = new Set()
    const subscribeConsent = (name, callback) => {
      const subscriber = { name: String(name), callback }
      consentSubscribers.add(subscriber)
      return () => consentSubscribers.delete(subscriber)
    }

    const api = {
      analytics: { subscribe },
      browser: {
        cookie: {
          get: (name) => call('cookie.get', name),
          set: (cookieOrName, value) => call('cookie.set', cookieOrName, value)
        },
        localStorage: storage('localStorage'),
        sessionStorage: storage('sessionStorage'),
        sendBeacon: (url, body) => call('sendBeacon', url, body)
      },
      init,
      settings,
      customerPrivacy: { subscribe: subscribeConsent },
      _pixelInfo: { id: pixelId, type: sandbox == 'lax' ? 'custom' : 'app', runtimeContext: sandbox }
    }

    port.onmessage = ({ data }) => {
      if (data.type == 'reply') {
        const waiting = pending.get(data.id)
        pending.delete(data.id)
        if (!waiting) return
        if ('error' in data) waiting.reject(new Error(data.error))
        else waiting.resolve(data.value)
      } else if (data.type == 'event') {
        seen.push(data.event)
        for (const subscriber of [...subscribers]) deliver(subscriber, data.event)
      } else if (data.type == 'consent') {
        for (const subscriber of [...consentSubscribers]) {
          if (subscriber.name != data.name) continue
          try {
            subscriber.callback(structuredClone(data.payload))
          } catch (error) {
            report(error)
          }
        }
      }
    }

    try {
      if (sandbox == 'lax') {
        // Shopify runs a custom pixel's pasted code inside a function that has the API in scope.
        // The line breaks keep a last line comment in the code from swallowing the closing brace.
        const pixel = new Function('api', 'var analytics = api.analytics, browser = api.browser, init = api.init\n' + code + '\n')
        pixel(api)
      } else {
        // An app pixel's bundle calls register() from @shopify/web-pixels-extension, which calls the
        // global shopify.extend('WebPixel::Render', callback). Shopify loads the bundle as a classic
        // script in the worker; eval called by another name (an indirect eval) runs it in the same
        // global scope.
        self.shopify = {
          extend(point, extend) {
            if (point != 'WebPixel::Render') throw new Error('Unknown extension point: ' + point)
            extend(api)
          }
        }
        const globalEval = eval
        globalEval(code)
      }
      port.postMessage({ type: 'ready' })
    } catch (error) {
      port.postMessage({ type: 'ready', error: describe(error) })
    }
  }
}
