import { readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { createServer } from 'node:http'
import { rollup } from 'rollup'
import { nodeResolve } from '@rollup/plugin-node-resolve'
import commonjs from '@rollup/plugin-commonjs'
import replace from '@rollup/plugin-replace'
import terser from '@rollup/plugin-terser'
import { launchChromium } from './launch.mjs'
import { median } from './click.mjs'
import { measure } from './sizes.mjs'

/*
 * What a page load costs the main thread, each library installed as its documentation says and
 * sending its page view to a local collector on the page's origin:
 *
 * - Chromium with the CPU throttled 4× (Emulation.setCPUThrottlingRate: a mid-range phone), a
 *   fresh browser context per load, the pages' loads interleaved (one of each page, then again,
 *   each round starting one page further on), LOADS loads of each, SETTLE_MS apart.
 * - Per load, CDP Performance.getMetrics WINDOW_MS after the navigation began: TaskDuration
 *   (every task of the page's main thread) and ScriptDuration (JavaScript alone). The figure of a
 *   library is the median of its loads less the median of the same page without any library.
 *
 * `node bench/load.mjs` prints the table; bench/run.mjs puts it with the others.
 */

const here = new URL('.', import.meta.url)
export const LOADS = 15
export const WINDOW_MS = 4000
export const THROTTLING = 4
// After each load, the closed page's renderer winds down on the other core of a 2-core machine:
// 2 s lets it finish before the next page starts. Ten interleaved rounds at 500 ms and at 2 s:
// the middle half of our page's task times spanned 156 to 256 ms, and 215 to 252 ms.
const SETTLE_MS = 2000

const TEXT = `<h1>A product</h1><p>${'Text of a product page. '.repeat(200)}</p>`
const STUB = `<script>window.discoveryFeedback=typeof discoveryFeedback=="function"?discoveryFeedback:function(){(discoveryFeedback.q=discoveryFeedback.q||[]).push(arguments)};</script>`
// Algolia's documented install: a queue under the global name, then their file loaded async.
const ALGOLIA_QUEUE = `<script>window.AlgoliaAnalyticsObject='aa';window.aa=window.aa||function(){(window.aa.queue=window.aa.queue||[]).push(arguments)};</script>`

export const OURS_IN_MEMORY = 'discovery-feedback, storage: memory'

export const PAGES = {
  none: `<title>none</title>${TEXT}`,
  'discovery-feedback': `<title>ours</title>${STUB}<script async src="/discovery-feedback.min.js" data-key="KEY" data-endpoint="/v3/feedback"></script>${TEXT}`,
  // The same tag without its durable outbox: what keeping each event through a crash costs a load.
  [OURS_IN_MEMORY]: `<title>ours, memory</title>${STUB}<script async src="/discovery-feedback.min.js" data-key="KEY" data-endpoint="/v3/feedback" data-storage="memory"></script>${TEXT}`,
  // search-insights has no page view: a product page sends viewedObjectIDs, as Algolia's guide for product pages does.
  'search-insights':
    `<title>search-insights</title>${ALGOLIA_QUEUE}<script>aa('init', { appId: 'APPID', apiKey: 'KEY', host: location.origin, useCookie: true });` +
    `aa('viewedObjectIDs', { index: 'products', eventName: 'Product viewed', objectIDs: ['item-1'] })</script>` +
    `<script async src="/search-insights.min.js"></script>${TEXT}`,
  'plausible-tracker': `<title>plausible</title><script defer src="/plausible-tracker.js"></script>${TEXT}`,
  snowplow: `<title>snowplow</title><script async src="/snowplow.js"></script>${TEXT}`
}
const LIBRARY_PAGES = Object.keys(PAGES).filter((name) => name != 'none')

/** The file each library's page loads, for its size. */
const FILE_OF = {
  'discovery-feedback': '/discovery-feedback.min.js',
  [OURS_IN_MEMORY]: '/discovery-feedback.min.js',
  'search-insights': '/search-insights.min.js',
  'plausible-tracker': '/plausible-tracker.js',
  snowplow: '/snowplow.js'
}

/** Each library's file as a page loads it: ours and search-insights as shipped, the others bundled from their packages. */
export async function files() {
  const out = {
    '/discovery-feedback.min.js': readFileSync(new URL('../dist/discovery-feedback.min.js', here)),
    '/search-insights.min.js': readFileSync(new URL('node_modules/search-insights/dist/search-insights.min.js', here))
  }
  mkdirSync(new URL('out/', here), { recursive: true })
  for (const name of ['plausible-tracker', 'snowplow']) {
    const bundle = await rollup({
      input: new URL('entries/load/' + name + '.js', here).pathname,
      plugins: [replace({ preventAssignment: true, values: { 'process.env.NODE_ENV': '"production"' } }), nodeResolve({ browser: true }), commonjs(), terser()],
      onwarn: () => {}
    })
    const { output } = await bundle.generate({ format: 'iife' })
    await bundle.close()
    out['/' + name + '.js'] = Buffer.from(output[0].code)
    writeFileSync(new URL('out/load-' + name + '.js', here), output[0].code)
  }
  return out
}

/** The page a URL of ours names. */
const pageName = (url) => decodeURIComponent(new URL(url, 'http://localhost').pathname.slice(1))

/**
 * The pages, their files and a collector that answers anything else 200, on one origin. `sent`
 * counts each page's requests to the collector, by the page that made them (their Referer).
 */
export function serve(scripts, sent = {}) {
  const server = createServer((request, response) => {
    const path = request.url.split('?')[0]
    if (scripts[path]) return response.writeHead(200, { 'content-type': 'text/javascript' }).end(scripts[path])
    const page = PAGES[pageName(path)]
    if (page) return response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><meta charset="utf-8">' + page)
    // Every page asks for a favicon: not a request to the collector.
    if (path == '/favicon.ico') return response.writeHead(404).end()
    const from = pageName(request.headers.referer || '/')
    sent[from] = (sent[from] || 0) + 1
    request.resume().on('end', () => response.writeHead(200, { 'content-type': 'text/plain' }).end())
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)))
}

/**
 * One load of a page in a fresh context: the page's main-thread milliseconds over the window.
 * `categories`: Chromium's trace of the load is recorded too, with these categories (bench/load-trace.mjs).
 */
export async function loadOnce(browser, url, categories) {
  const context = await browser.newContext()
  const page = await context.newPage()
  const cdp = await context.newCDPSession(page)
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: THROTTLING })
  await cdp.send('Performance.enable')
  if (categories) await browser.startTracing(page, { categories })
  const start = Date.now()
  await page.goto(url)
  await page.waitForTimeout(Math.max(0, WINDOW_MS - (Date.now() - start)))
  const { metrics } = await cdp.send('Performance.getMetrics')
  const value = (name) => metrics.find((metric) => metric.name == name).value * 1000
  const result = { task: value('TaskDuration'), script: value('ScriptDuration') }
  if (categories) result.trace = await browser.stopTracing()
  await context.close()
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS))
  return result
}

/**
 * How far a page's loads spread: the middle half of its task times, from the first quartile to
 * the third (ms). The page's own load varies by more than a library costs on a busy machine: a
 * median less another is only as steady as this says.
 */
const spreadOf = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  return [sorted[Math.floor(sorted.length / 4)], sorted[Math.floor((sorted.length * 3) / 4)]]
}

/** The pages of one round: each round starts one page further on, so that no page always follows the same one. */
export const roundOf = (names, round) => [...names.slice(round % names.length), ...names.slice(0, round % names.length)]

/** `pages`: the pages to load, the page without a library always among them (all by default). */
export async function loadCost({ loads = LOADS, pages = Object.keys(PAGES) } = {}) {
  const scripts = await files()
  const sent = {}
  const server = await serve(scripts, sent)
  const origin = 'http://127.0.0.1:' + server.address().port
  const browser = await launchChromium()
  const names = ['none', ...pages.filter((name) => name != 'none')]
  const runs = Object.fromEntries(names.map((name) => [name, { task: [], script: [] }]))
  try {
    for (let round = 0; round < loads; round++) {
      for (const name of roundOf(names, round)) {
        const { task, script } = await loadOnce(browser, origin + '/' + encodeURIComponent(name))
        runs[name].task.push(task)
        runs[name].script.push(script)
      }
    }
  } finally {
    await browser.close()
    server.close()
  }
  // A page whose library sent nothing measured a library that did not do its work.
  const measured = LIBRARY_PAGES.filter((name) => names.includes(name))
  for (const name of measured) if ((sent[name] || 0) < loads) throw new Error(`${name}: ${sent[name] || 0} requests to the collector in ${loads} loads`)
  const base = { task: median(runs.none.task), script: median(runs.none.script), spread: spreadOf(runs.none.task) }
  const libraries = {}
  for (const name of measured) {
    libraries[name] = {
      taskMs: median(runs[name].task) - base.task,
      scriptMs: median(runs[name].script) - base.script,
      spread: spreadOf(runs[name].task),
      brotli: measure(scripts[FILE_OF[name]]).brotli,
      runs: runs[name]
    }
  }
  return { date: new Date().toISOString().slice(0, 10), throttling: THROTTLING, loads, windowMs: WINDOW_MS, base, libraries, requests: sent }
}

if (import.meta.url == 'file://' + process.argv[1]) {
  // `node bench/load.mjs 15 discovery-feedback,search-insights`: those pages only, beside the page without a library.
  const result = await loadCost({ loads: Number(process.argv[2]) || LOADS, pages: process.argv[3]?.split(',') })
  console.log(
    `\n${result.date}: page load, Chromium, CPU ${result.throttling}× slower, ${result.loads} interleaved loads each, medians over ${result.windowMs} ms less the page without a library\n`
  )
  const theirs = result.libraries['search-insights']
  const versus = (ours, their) => (theirs ? ` | ${(ours / their).toFixed(2)}×` : '')
  console.log(`| library | main-thread task ms | script ms | brotli |${theirs ? ' task vs search-insights | script vs search-insights |' : ''}`)
  console.log(`|---|---|---|---|${theirs ? '---|---|' : ''}`)
  for (const [name, { taskMs, scriptMs, brotli }] of Object.entries(result.libraries))
    console.log(
      `| ${name} | ${taskMs.toFixed(1)} | ${scriptMs.toFixed(1)} | ${brotli} B${versus(taskMs, theirs?.taskMs)}${versus(scriptMs, theirs?.scriptMs)} |`
    )
  console.log(`\nThe page without a library: ${result.base.task.toFixed(1)} ms of tasks, ${result.base.script.toFixed(1)} ms of script (medians)`)
  console.log("The middle half of each page's task times, ms (its spread):")
  for (const [name, { spread }] of [['none', result.base], ...Object.entries(result.libraries)])
    console.log(`  ${name}: ${spread.map((ms) => ms.toFixed(0)).join(' to ')}`)
}
