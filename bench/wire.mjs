import { spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { rollup } from 'rollup'
import { nodeResolve } from '@rollup/plugin-node-resolve'
import commonjs from '@rollup/plugin-commonjs'
import replace from '@rollup/plugin-replace'
import terser from '@rollup/plugin-terser'
import { launchChromium } from './launch.mjs'
import { idle, median, page } from './click.mjs'

/*
 * What a click costs with its delivery included, ours beside search-insights, in one run:
 *
 * - Chromium: main-thread time per click, from CDP Performance.getMetrics (TaskDuration, every
 *   task of the page's main thread) before and after 1,000 clicks, one per task, until the
 *   requests have been answered by a local collector (200); minus the same loop on a page
 *   without any library. Ours as the script tag (dist/discovery-feedback.min.js), theirs as
 *   their script tag (search-insights.min.js with Algolia's snippet) and its default transport
 *   (sendBeacon) pointed at the same collector with `host`. Median of 5 runs each.
 * - jsdom: whole-process CPU (process.cpuUsage, user + system) per event, 10,000 calls, one per
 *   event-loop turn, each library bundled from its package (ours: createTracker from
 *   dist/index.mjs) by the same rollup settings and run in click.mjs's page, with its stubbed
 *   sendBeacon, fetch and XMLHttpRequest. Each run is a fresh Node process; median of 5.
 *
 * Both also run ours with storage: 'memory', which skips the localStorage write that keeps each
 * event on disk before its task ends: the difference is what that guarantee costs. In
 * Chromium the first localStorage write of a task costs the page a storage flush; in jsdom
 * every write and removal also schedules a timer for the storage event.
 *
 * `node bench/wire.mjs` prints the figures; bench/run.mjs puts them in the table.
 */

const here = new URL('.', import.meta.url)
const STUB = `<script>window.discoveryFeedback=typeof discoveryFeedback=="function"?discoveryFeedback:function(){(discoveryFeedback.q=discoveryFeedback.q||[]).push(arguments)};</script>`
// Algolia's snippet for the script tag, as their documentation gives it.
const ALGOLIA_SNIPPET = `<script>window.AlgoliaAnalyticsObject='aa';window.aa=window.aa||function(){(window.aa.queue=window.aa.queue||[]).push(arguments)};</script>`
const TEXT = `<h1>A listing</h1><p>${'Text of a listing page. '.repeat(200)}</p>`
// One click per task; the same arguments are built on the page without a library.
const LOOP = (call) => `<script>window.run = (count) => new Promise((done) => {
  let i = 0
  const step = () => {
    ${call}
    if (++i < count) setTimeout(step, 0)
    else done()
  }
  setTimeout(step, 0)
})</script>`

function ourPage(title, attributes) {
  return (
    `<title>${title}</title>${STUB}<script async src="/discovery-feedback.min.js" data-key="KEY" data-endpoint="/v3/feedback"${attributes}></script>${TEXT}` +
    `<script>window.ready = () => !!discoveryFeedback.tracker</script>` +
    LOOP(`discoveryFeedback('click-item', { rid: 's-0b5d5b8a', item_id: 'item-' + (i % 100), variant_item_id: 'variant-' + (i % 100) })`)
  )
}

const PAGES = {
  none:
    `<title>none</title>${TEXT}<script>window.noop = function () {}; window.ready = () => true</script>` +
    LOOP(`noop('click-item', { rid: 's-0b5d5b8a', item_id: 'item-' + (i % 100), variant_item_id: 'variant-' + (i % 100) })`),
  ours: ourPage('ours', ''),
  // The same without localStorage (storage: 'memory'): what the crash guarantee's write per task costs.
  memory: ourPage('memory', ' data-storage="memory"'),
  theirs:
    `<title>theirs</title>${ALGOLIA_SNIPPET}<script>aa('init', { appId: 'APPID', apiKey: 'KEY', host: location.origin })</script>` +
    `<script async src="/search-insights.min.js"></script>${TEXT}` +
    `<script>window.ready = () => !!window.AlgoliaAnalytics</script>` +
    LOOP(`aa('clickedObjectIDs', { index: 'products', eventName: 'Item clicked', objectIDs: ['item-' + (i % 100)] })`)
}

const FILES = {
  '/discovery-feedback.min.js': new URL('../dist/discovery-feedback.min.js', here),
  '/search-insights.min.js': new URL('node_modules/search-insights/dist/search-insights.min.js', here)
}

/** Pages, scripts and a collector on one origin; the collector answers every POST 200. */
function serve() {
  const stats = { posts: 0, bytes: 0 }
  const server = createServer((request, response) => {
    const path = request.url.split('?')[0]
    if (request.method == 'POST') {
      stats.posts++
      request.on('data', (chunk) => (stats.bytes += chunk.length))
      request.on('end', () => response.writeHead(200, { 'content-type': 'text/plain' }).end())
    } else if (FILES[path]) response.writeHead(200, { 'content-type': 'text/javascript' }).end(readFileSync(FILES[path]))
    else if (PAGES[path.slice(1)])
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><meta charset="utf-8">' + PAGES[path.slice(1)])
    else response.writeHead(204).end()
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, stats })))
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Waits until the collector has seen no request for `quiet` ms. */
async function quiet(stats, ms = 300) {
  let last = stats.posts
  let since = Date.now()
  while (Date.now() - since < ms) {
    await sleep(25)
    if (stats.posts != last) [last, since] = [stats.posts, Date.now()]
  }
}

/** Main-thread ms of one page's `clicks` clicks, with their sending and answers. */
async function chromiumRun(browser, origin, stats, name, clicks) {
  const context = await browser.newContext()
  try {
    const page = await context.newPage()
    const errors = []
    page.on('pageerror', (error) => errors.push(error.message))
    await page.goto(origin + '/' + name)
    await page.waitForFunction(() => window.ready())
    // Past the load and the first second of the library (ours sends its view-page then).
    await sleep(1500)
    await quiet(stats)
    const cdp = await context.newCDPSession(page)
    await cdp.send('Performance.enable')
    const task = async () => (await cdp.send('Performance.getMetrics')).metrics.find((metric) => metric.name == 'TaskDuration').value
    const posts = stats.posts
    const bytes = stats.bytes
    const before = await task()
    await page.evaluate((count) => window.run(count), clicks)
    // Until every request has gone and been answered: ours waits up to flushInterval (1 s).
    await sleep(1500)
    await quiet(stats)
    const after = await task()
    await cdp.detach()
    if (errors.length) throw new Error(name + ': ' + errors.join('; '))
    return { ms: (after - before) * 1000, requests: stats.posts - posts, bytes: stats.bytes - bytes }
  } finally {
    await context.close()
  }
}

export async function chromiumPerClick({ runs = 5, clicks = 1000 } = {}) {
  const { server, stats } = await serve()
  const origin = 'http://127.0.0.1:' + server.address().port
  const browser = await launchChromium()
  const raw = { none: [], ours: [], memory: [], theirs: [] }
  try {
    // Interleaved, so that a slower moment of the machine falls on all three alike.
    for (let run = 0; run < runs; run++) for (const name of Object.keys(raw)) raw[name].push(await chromiumRun(browser, origin, stats, name, clicks))
  } finally {
    await browser.close()
    server.close()
  }
  const none = median(raw.none.map((run) => run.ms))
  const perClick = (name) => (1000 * (median(raw[name].map((run) => run.ms)) - none)) / clicks
  return {
    clicks,
    runs,
    noneMs: none,
    oursMs: median(raw.ours.map((run) => run.ms)),
    theirsMs: median(raw.theirs.map((run) => run.ms)),
    // µs of main-thread time per click, the library's share: its median minus the page's without it.
    oursUs: perClick('ours'),
    memoryUs: perClick('memory'),
    theirsUs: perClick('theirs'),
    requests: { ours: median(raw.ours.map((run) => run.requests)), theirs: median(raw.theirs.map((run) => run.requests)) },
    bytes: { ours: median(raw.ours.map((run) => run.bytes)), theirs: median(raw.theirs.map((run) => run.bytes)) },
    raw
  }
}

const ENTRIES = {
  ours: `import { createTracker } from '../../dist/index.mjs'
const tracker = createTracker({ key: 'KEY', endpoint: 'https://collector.example/v3/feedback', autoViewPage: false })
globalThis.benchClick = (i) => tracker.clickItem({ rid: 's-0b5d5b8a', item_id: 'item-' + i, variant_item_id: 'variant-' + i })`,
  memory: `import { createTracker } from '../../dist/index.mjs'
const tracker = createTracker({ key: 'KEY', endpoint: 'https://collector.example/v3/feedback', autoViewPage: false, storage: 'memory' })
globalThis.benchClick = (i) => tracker.clickItem({ rid: 's-0b5d5b8a', item_id: 'item-' + i, variant_item_id: 'variant-' + i })`,
  theirs: `import aa from 'search-insights'
aa('init', { appId: 'APPID', apiKey: 'KEY' })
globalThis.benchClick = (i) => aa('clickedObjectIDs', { index: 'products', eventName: 'Item clicked', objectIDs: ['item-' + i] })`,
  none: `globalThis.benchClick = (i) => { globalThis.benchLast = { item_id: 'item-' + i } }`
}

/** Each entry bundled as a shop's build would (the settings of sizes.mjs), into bench/out/. */
async function bundles() {
  mkdirSync(new URL('out/', here), { recursive: true })
  const files = {}
  for (const [name, code] of Object.entries(ENTRIES)) {
    const input = new URL('out/wire-entry-' + name + '.js', here)
    writeFileSync(input, code + '\n')
    const bundle = await rollup({
      input: fileURLToPath(input),
      plugins: [replace({ preventAssignment: true, values: { 'process.env.NODE_ENV': '"production"' } }), nodeResolve({ browser: true }), commonjs(), terser()],
      onwarn: () => {}
    })
    const { output } = await bundle.generate({ format: 'iife' })
    await bundle.close()
    const file = new URL('out/wire-' + name + '.js', here)
    writeFileSync(file, output[0].code)
    files[name] = fileURLToPath(file)
  }
  return files
}

/** In a fresh process: CPU µs of `calls` calls, one per event-loop turn, and what they sent. */
async function cpuChild(file, calls) {
  const { window, wire, close } = page(file)
  await idle(window)
  await sleep(1200)
  wire.length = 0
  const turn = () => new Promise((resolve) => setImmediate(resolve))
  const start = process.cpuUsage()
  const began = performance.now()
  for (let i = 0; i < calls; i++) {
    window.benchClick(i % 100)
    await turn()
  }
  // What the library left for later (ours: the last batch, within flushInterval) is counted too.
  await sleep(1500)
  const used = process.cpuUsage(start)
  const result = { cpuUs: used.user + used.system, wallMs: performance.now() - began - 1500, requests: wire.length }
  close()
  return result
}

export async function jsdomCpuPerEvent({ runs = 5, calls = 10000 } = {}) {
  const files = await bundles()
  const raw = { none: [], ours: [], memory: [], theirs: [] }
  const self = fileURLToPath(import.meta.url)
  for (let run = 0; run < runs; run++) {
    for (const name of Object.keys(raw)) {
      const child = spawnSync(process.execPath, [self, '--cpu-child', files[name], String(calls)], { encoding: 'utf8' })
      if (child.status != 0) throw new Error(name + ': ' + child.stderr)
      raw[name].push(JSON.parse(child.stdout.trim().split('\n').pop()))
    }
  }
  const per = (name) => median(raw[name].map((run) => run.cpuUs)) / calls
  return {
    calls,
    runs,
    // Whole-process CPU µs per event, and the same less the loop without a library.
    oursUs: per('ours'),
    memoryUs: per('memory'),
    theirsUs: per('theirs'),
    noneUs: per('none'),
    oursNetUs: per('ours') - per('none'),
    theirsNetUs: per('theirs') - per('none'),
    requests: { ours: median(raw.ours.map((run) => run.requests)), theirs: median(raw.theirs.map((run) => run.requests)) },
    raw
  }
}

export async function wireCost() {
  return { chromium: await chromiumPerClick(), jsdom: await jsdomCpuPerEvent() }
}

const main = process.argv[1] && import.meta.url == pathToFileURL(process.argv[1]).href
if (main && process.argv[2] == '--cpu-child') {
  const result = await cpuChild(process.argv[3], Number(process.argv[4]))
  console.log(JSON.stringify(result))
  process.exit(0)
} else if (main) {
  const fixed = (value, digits = 2) => value.toFixed(digits)
  const { chromium: browser, jsdom } = await wireCost()
  console.log(
    `\nChromium, ${browser.clicks} clicks one per task, main-thread time (CDP TaskDuration) less the page without a library (${fixed(browser.noneMs, 1)} ms); median of ${browser.runs}:`
  )
  console.log(
    `  ours (discovery-feedback.min.js):  ${fixed(browser.oursUs)} µs per click  (${fixed(browser.oursMs, 1)} ms in all, ${browser.requests.ours} requests, ${browser.bytes.ours} B)`
  )
  console.log(
    `  theirs (search-insights.min.js):   ${fixed(browser.theirsUs)} µs per click  (${fixed(browser.theirsMs, 1)} ms in all, ${browser.requests.theirs} requests, ${browser.bytes.theirs} B)`
  )
  console.log(`  ours without localStorage:         ${fixed(browser.memoryUs)} µs per click`)
  console.log(
    `  ratio ours / theirs:               ${fixed(browser.oursUs / browser.theirsUs)}×, without localStorage ${fixed(browser.memoryUs / browser.theirsUs)}×`
  )
  console.log(`\njsdom, ${jsdom.calls} calls one per event-loop turn, whole-process CPU (user + system) per event; median of ${jsdom.runs} processes:`)
  console.log(
    `  ours (createTracker, dist/index.mjs): ${fixed(jsdom.oursUs)} µs  (${fixed(jsdom.oursNetUs)} µs over the loop alone, ${jsdom.requests.ours} requests)`
  )
  console.log(
    `  theirs (search-insights):             ${fixed(jsdom.theirsUs)} µs  (${fixed(jsdom.theirsNetUs)} µs over the loop alone, ${jsdom.requests.theirs} requests)`
  )
  console.log(`  ours without localStorage:            ${fixed(jsdom.memoryUs)} µs`)
  console.log(`  loop without a library:               ${fixed(jsdom.noneUs)} µs`)
  console.log(
    `  ratio ours / theirs:                  ${fixed(jsdom.oursUs / jsdom.theirsUs)}× whole process, ${fixed(jsdom.oursNetUs / jsdom.theirsNetUs)}× over the loop alone`
  )
}
