import { readFileSync } from 'node:fs'
import { JSDOM } from 'jsdom'

/*
 * The cost of one tracked click on the caller's thread, in jsdom with every transport stubbed:
 * sendBeacon, fetch and XMLHttpRequest accept and record the body, and answer at once.
 */

export const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
/** Lets the microtasks queued by the calls run (work a library defers within the same task). */
export const microtasks = async () => {
  for (let i = 0; i < 10; i++) await null
}
export const idle = (window) => new Promise((resolve) => window.setTimeout(resolve, 0))

/** A fresh page with stubbed transports and the bundle loaded; `wire` lists the requests made. */
export function page(bundleFile) {
  const dom = new JSDOM('<!doctype html><title>shop</title>', { url: 'https://shop.example/product/1', runScripts: 'outside-only', pretendToBeVisual: true })
  const { window } = dom
  const wire = []
  const size = (body) => (body == null ? 0 : typeof body == 'string' ? Buffer.byteLength(body) : (body.size ?? body.byteLength ?? String(body).length))
  window.navigator.sendBeacon = (url, body) => {
    wire.push({ url: String(url), bytes: size(body) })
    return true
  }
  window.fetch = (url, init = {}) => {
    wire.push({ url: String(url), bytes: size(init.body) })
    return Promise.resolve(new Response(null, { status: 204 }))
  }
  window.XMLHttpRequest = class {
    open(method, url) {
      this.url = url
    }
    setRequestHeader() {}
    send(body) {
      wire.push({ url: String(this.url), bytes: size(body) })
      this.readyState = 4
      this.status = 200
      window.setTimeout(() => this.onreadystatechange && this.onreadystatechange(), 0)
    }
  }
  // jsdom has none of these; Node's serve the libraries that build requests with them.
  Object.assign(window, { Request, Response, Headers })
  window.eval(readFileSync(bundleFile, 'utf8'))
  return { window, wire, close: () => window.close() }
}

/**
 * Median µs per call over `runs` rounds of `calls` clicks. `sync` counts the calls alone;
 * `total` adds the microtasks that follow them, the work a library defers within the same task.
 */
export async function clickCost(bundleFile, { runs = 7, calls = 10000 } = {}) {
  const sync = []
  const total = []
  const { window, wire, close } = page(bundleFile)
  await idle(window)
  for (let run = 0; run < runs + 1; run++) {
    let inCalls = 0
    let inDeferred = 0
    // Clicks come in bursts of 100 with an idle moment between, as a shopper's do; the library
    // gets to send in between, so no bound on queued events is reached. They go to the 100
    // items of a listing: search-insights keeps a record per clicked item in localStorage,
    // whose cost grows with every new item.
    for (let burst = 0; burst < calls / 100; burst++) {
      const start = performance.now()
      for (let i = 0; i < 100; i++) window.benchClick(i)
      const looped = performance.now()
      await microtasks()
      inCalls += looped - start
      inDeferred += performance.now() - looped
      await idle(window)
    }
    if (run == 0) continue // warm-up: the JIT has not seen the path yet
    sync.push((inCalls * 1000) / calls)
    total.push(((inCalls + inDeferred) * 1000) / calls)
  }
  close()
  return { sync: median(sync), total: median(total), requests: wire.length }
}
