import { createServer } from 'node:http'
import { readFileSync } from 'node:fs'
import { launchChromium } from './launch.mjs'
import { median } from './click.mjs'

/*
 * Main-thread time spent in our code in real Chromium, read from V8's sampling profiler (CDP
 * Profiler, a sample every 50 µs): the self time of every function from our script file. Long
 * tasks (> 50 ms) come from the page's own PerformanceObserver.
 */

const SCRIPT = readFileSync(new URL('../dist/discovery-feedback.min.js', import.meta.url))
const STUB = `<script>window.discoveryFeedback=typeof discoveryFeedback=="function"?discoveryFeedback:function(){(discoveryFeedback.q=discoveryFeedback.q||[]).push(arguments)};</script>`
const PAGE = `<!doctype html><meta charset="utf-8"><title>A product</title>${STUB}
<script>window.longTasks=[];new PerformanceObserver((list)=>longTasks.push(...list.getEntries().map((task)=>[task.startTime,task.duration]))).observe({type:'longtask'})</script>
<h1>A product</h1><p>${'Text of a product page. '.repeat(200)}</p>`

function serve() {
  const server = createServer((request, response) => {
    if (request.url == '/df.min.js') response.writeHead(200, { 'content-type': 'text/javascript' }).end(SCRIPT)
    else if (request.url.startsWith('/v3/feedback')) request.resume().on('end', () => response.writeHead(204).end())
    else response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE)
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)))
}

/** Milliseconds of samples in functions of our file. */
function ourTime(profile) {
  const ours = new Set(profile.nodes.filter((node) => node.callFrame.url.endsWith('/df.min.js')).map((node) => node.id))
  let micros = 0
  profile.samples.forEach((id, i) => {
    if (ours.has(id)) micros += profile.timeDeltas[i] || 0
  })
  return micros / 1000
}

/** Runs in the page: `count` clicks in one task; returns the milliseconds they took. */
function clicks(count) {
  const start = performance.now()
  for (let i = 0; i < count; i++) window.discoveryFeedback('click-item', { rid: 's-0b5d5b8a', item_id: 'item-' + i, variant_item_id: 'variant-' + i })
  return performance.now() - start
}

async function profiled(page, action) {
  const cdp = await page.context().newCDPSession(page)
  await cdp.send('Profiler.enable')
  await cdp.send('Profiler.setSamplingInterval', { interval: 50 })
  await cdp.send('Profiler.start')
  await action()
  const { profile } = await cdp.send('Profiler.stop')
  await cdp.detach()
  return ourTime(profile)
}

export async function chromiumCost({ runs = 5, burst = 1000 } = {}) {
  const server = await serve()
  const origin = 'http://127.0.0.1:' + server.address().port
  const browser = await launchChromium()
  const load = []
  const burstTime = []
  const burstTask = []
  const longTasks = []
  try {
    for (let run = 0; run < runs; run++) {
      const context = await browser.newContext()
      const page = await context.newPage()
      await page.goto(origin + '/product')
      // Loading: the script tag added as a shop's template has it, then its first second:
      // evaluation, identity, the automatic view-page and its request.
      load.push(
        await profiled(page, async () => {
          await page.evaluate(() => {
            const script = document.createElement('script')
            script.src = '/df.min.js'
            script.dataset.key = 'KEY'
            script.dataset.endpoint = '/v3/feedback'
            document.head.append(script)
          })
          await page.waitForRequest((request) => request.url().includes('/v3/feedback'))
        })
      )
      // A burst: 1,000 clicks in one task, then until their requests have gone.
      burstTime.push(
        await profiled(page, async () => {
          await page.evaluate(clicks, burst)
          await page.waitForTimeout(1500)
        })
      )
      // The same without the profiler, whose sampling slows the page: how long the calls hold
      // the main thread, and whether any task of the burst grew long.
      const before = await page.evaluate(() => window.longTasks.length)
      burstTask.push(await page.evaluate(clicks, burst))
      await page.waitForTimeout(1500)
      longTasks.push(...(await page.evaluate((from) => window.longTasks.slice(from).map(([, duration]) => Math.round(duration)), before)))
      await context.close()
    }
  } finally {
    await browser.close()
    server.close()
  }
  return { loadMs: median(load), burstMs: median(burstTime), burstCallsMs: median(burstTask), longTasks, bursts: runs }
}
