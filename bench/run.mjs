import { writeFileSync } from 'node:fs'
import { chromiumCost } from './chromium.mjs'
import { clickCost } from './click.mjs'
import { flushCost } from './flush.mjs'
import { loadCost, OURS_IN_MEMORY } from './load.mjs'
import { loadTrace } from './load-trace.mjs'
import { loadTraceTable } from './load-trace-table.mjs'
import { clusterCost, forwardCost, relayCost } from './relay.mjs'
import { breakdown, bundleAll, LIBRARIES, shipped } from './sizes.mjs'
import { wireCost } from './wire.mjs'

// One run on this machine, everything side by side: `npm run bench` at the top level.

const OURS = 'discovery-feedback'
const ratio = (ours, theirs) => (ours / theirs).toFixed(2)
const round = (value, digits = 1) => Number(value.toFixed(digits))

const bundles = await bundleAll()
const files = shipped()
const parts = await breakdown()
const clicks = {}
for (const name of LIBRARIES) clicks[name] = await clickCost(bundles[name].file)
const flush = await flushCost(bundles[OURS].file)
const browser = await chromiumCost()
const load = await loadCost()
const loadTraced = await loadTrace()
const wire = await wireCost()
const relay = await relayCost()
const forward = await forwardCost()
const onCluster = await clusterCost()

const rows = []
const row = (measure, value, comparison = '') => rows.push({ measure, value, comparison })
row(
  'script tag (dist/discovery-feedback.min.js), brotli',
  files[OURS].brotli + ' B',
  `${ratio(files[OURS].brotli, files['search-insights'].brotli)}× search-insights.min.js (${files['search-insights'].brotli} B)`
)
for (const name of LIBRARIES.filter((name) => name != OURS)) {
  row(
    `bundle: init + one click, brotli, vs ${name}`,
    bundles[OURS].brotli + ' B',
    `${ratio(bundles[OURS].brotli, bundles[name].brotli)}× (${bundles[name].brotli} B)`
  )
}
for (const name of LIBRARIES.filter((name) => name != OURS)) {
  const ours = clicks[OURS].sync
  const theirs = clicks[name].sync
  row(`one tracked click, caller's thread, vs ${name}`, round(ours, 2) + ' µs', `${ratio(ours, theirs)}× (${round(theirs, 2)} µs)`)
}
row('one tracked click with the work it defers to the same task', round(clicks[OURS].total, 2) + ' µs')
row('flush of 1,000 queued events (serialise + split)', round(flush.ms, 2) + ' ms', `${flush.requests} requests`)
row('bytes on the wire per event', round(flush.bytesPerEvent) + ' B')
row('Chromium: our main-thread time, page load to first request', round(browser.loadMs) + ' ms', 'CPU profiler samples in our file')
row('Chromium: our main-thread time, 1,000-event burst until sent', round(browser.burstMs) + ' ms', 'CPU profiler samples in our file')
row('Chromium: the 1,000 calls themselves, unprofiled', round(browser.burstCallsMs) + ' ms')
row(
  'Chromium: long tasks (> 50 ms) during the unprofiled bursts',
  String(browser.longTasks.length),
  browser.bursts + ' bursts' + (browser.longTasks.length ? ', lasting ' + browser.longTasks.join(', ') + ' ms' : '')
)
row(
  'Chromium: main-thread time per click, sending included (1,000 clicks one per task, CDP TaskDuration less the page without a library), vs search-insights',
  round(wire.chromium.oursUs, 1) + ' µs',
  `${ratio(wire.chromium.oursUs, wire.chromium.theirsUs)}× (${round(wire.chromium.theirsUs, 1)} µs); ${wire.chromium.requests.ours} requests against ${wire.chromium.requests.theirs}`
)
row(
  "Chromium: the same, ours with storage: 'memory' (no localStorage write per tracking task, no crash guarantee)",
  round(wire.chromium.memoryUs, 1) + ' µs',
  `${ratio(wire.chromium.memoryUs, wire.chromium.theirsUs)}×`
)
row(
  'jsdom: whole-process CPU per event (10,000 calls one per event-loop turn, stubbed transports), vs search-insights',
  round(wire.jsdom.oursUs, 2) + ' µs',
  `${ratio(wire.jsdom.oursUs, wire.jsdom.theirsUs)}× (${round(wire.jsdom.theirsUs, 2)} µs); the loop alone ${round(wire.jsdom.noneUs, 2)} µs`
)
row("jsdom: the same, ours with storage: 'memory'", round(wire.jsdom.memoryUs, 2) + ' µs', `${ratio(wire.jsdom.memoryUs, wire.jsdom.theirsUs)}×`)
// A page load (bench/load.mjs): Chromium at 4x CPU throttling, interleaved fresh loads, medians less a page without a library.
const loadOf = (name) => load.libraries[name]
for (const name of Object.keys(load.libraries).filter((name) => name != OURS && name != OURS_IN_MEMORY)) {
  const ours = loadOf(OURS)
  const theirs = loadOf(name)
  row(
    `page load, Chromium 4× throttled: main-thread task ms (script ms), ${load.loads} interleaved loads, vs ${name}`,
    `${round(ours.taskMs, 0)} ms (${round(ours.scriptMs, 0)} ms)`,
    `${ratio(ours.taskMs, theirs.taskMs)}× (${round(theirs.taskMs, 0)} ms); script ${ratio(ours.scriptMs, theirs.scriptMs)}× (${round(theirs.scriptMs, 0)} ms)`
  )
}
const inMemory = loadOf(OURS_IN_MEMORY)
row(
  "page load, the same, ours with storage: 'memory' (no localStorage outbox, no crash guarantee)",
  `${round(inMemory.taskMs, 0)} ms (${round(inMemory.scriptMs, 0)} ms)`
)
// The relay (bench/relay.mjs): one process, fileSink, 50-event batches over keep-alive connections.
const { memory, redis } = relay.summary
row(
  "relay, memoryStore(): events per second per core (the relay process's CPU)",
  memory.eventsPerCoreSecond + '',
  `${memory.eventsPerSecond} events/s on the wall clock`
)
row(
  'relay, redisStore(node-redis 5): events per second per core',
  redis.eventsPerCoreSecond + '',
  `${ratio(memory.eventsPerCoreSecond, redis.eventsPerCoreSecond)}× the memory store's CPU per event; ${redis.eventsPerCoreSecondWithRedis} per core counting redis-server's CPU too`
)
// The relay forwarding (bench/relay.mjs): one SPEC envelope a request to the service stand-in, against batches.
const { spec, batch } = forward.summary
row(
  "relay → service stand-in, forwardSink format 'spec' (one request per event, pipelined): events per relay CPU-second",
  spec.eventsPerCoreSecond + '',
  `${ratio(batch.eventsPerCoreSecond, spec.eventsPerCoreSecond)}× fewer than format 'batch' (${batch.eventsPerCoreSecond}); ${spec.eventsPerSecond} events/s on the wall clock; the stand-in took ${spec.serviceEventsPerCoreSecond} events per CPU-second of its own`
)
// The relay's store on Redis Cluster (bench/relay.mjs): six nodes, shards: 16, against one redis-server, in alternating runs.
const { redis: single, cluster } = onCluster.summary
row(
  'relay, redisStore(node-redis 5) on Redis Cluster (3 masters, 3 replicas, shards: 16): events per second per core',
  cluster.eventsPerCoreSecond + '',
  `${ratio(single.eventsPerCoreSecond, cluster.eventsPerCoreSecond)}× the relay's CPU per event of one redis-server (${single.eventsPerCoreSecond} in the same runs); ${cluster.eventsPerCoreSecondWithRedis} per core counting the six nodes' CPU too, against ${single.eventsPerCoreSecondWithRedis}`
)

const results = {
  date: new Date().toISOString().slice(0, 10),
  command: 'npm run bench',
  node: process.version,
  rows,
  raw: {
    bundles,
    shipped: files,
    breakdown: parts,
    clicks,
    flush,
    chromium: browser,
    load,
    loadTraced,
    wire,
    relay: relay.summary,
    relayForward: forward.summary,
    relayCluster: onCluster.summary
  }
}
writeFileSync(new URL('results.json', import.meta.url), JSON.stringify(results, null, 2) + '\n')

console.log(`\n${results.date}, ${results.command}, Node ${process.version}; medians\n`)
console.log('| measure | discovery-feedback | compared |\n|---|---|---|')
for (const { measure, value, comparison } of rows) console.log(`| ${measure} | ${value} | ${comparison} |`)
console.log("\nWhere the script tag's brotli bytes come from (estimated from its source map):\n")
console.log('| source | minified | brotli |\n|---|---|---|')
for (const { source, min, brotli } of parts) console.log(`| ${source} | ${min} B | ${brotli} B |`)
console.log("\nWhere a page load's main-thread time goes (bench/load-trace.mjs), less the page without a library:\n")
for (const line of loadTraceTable(loadTraced)) console.log(line)
console.log('\nWritten to bench/results.json')
