// Events per second per core of one relay process (dist/relay.mjs behind node:http, the
// package's fileSink), with memoryStore() and with redisStore() over node-redis and a local
// redis-server; then the same relay forwarding with forwardSink to a service in a process of its
// own: in format 'spec' to the service stand-in (test/support/service-stand-in.ts, one SPEC
// envelope a request, over HTTP/1.1 as node:http serves it: pipelined requests are read as they
// come and answered in order), in format 'batch' to a collector of arrays. The service's own
// CPU per event is printed beside the relay's. Last, redisStore() on one redis-server against the
// relay guide's store on a Redis Cluster of six (test/relay/redis-cluster.ts).
// `npx rollup -c && node bench/relay.mjs [seconds] [cluster]` (`cluster`: that last part only).
// Not part of npm test.
//
// The load comes from other processes' threads (worker_threads), each posting 50-event batches
// of fresh event ids over keep-alive connections, so the relay's own CPU is what limits it. The
// figure per core is events stored per second of the relay process's CPU time (user + system,
// from /proc/<pid>/stat), so it holds whatever else the machine runs; Redis's own CPU is
// reported beside it. Each store is measured RUNS times, alternating; the median is printed.
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { createServer as createHttpServer } from 'node:http'
import { connect, createServer } from 'node:net'
import { availableParallelism, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads'

const BATCH = 50
const CONNECTIONS_PER_THREAD = 8
const THREADS = 2
const RUNS = 3
const SECONDS = Number(process.argv[2]) || 5

if (!isMainThread) {
  // A load thread: CONNECTIONS_PER_THREAD loops, each one request at a time over its own keep-alive socket.
  const { url, tag, thread, until } = workerData
  const { Agent, request } = await import('node:http')
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS_PER_THREAD })
  // A shopper's browser, so that the relay's bot check costs what it costs in production.
  const BROWSER = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36'
  const head = '{"event":"click-item","properties":{"rid":"s-1","item_id":"1001","variant_item_id":"1001-38"},"key":"KEY","t_client":1767261600000,'
  const user = '"user":{"uid":"V1StGXR8_Z5jdHi6B-myT","sid":"Uakgb_J5m9g-0JDMbcJqL","lang":["en"]},"event_id":"'
  const post = (body) =>
    new Promise((resolve, reject) => {
      const sent = request(
        url + '?t_sent=' + Date.now(),
        { method: 'POST', agent, headers: { 'content-type': 'text/plain;charset=UTF-8', 'user-agent': BROWSER } },
        (response) => {
          let text = ''
          response.on('data', (chunk) => (text += chunk))
          response.on('end', () => resolve(response.statusCode == 200 ? JSON.parse(text).accepted : -1))
        }
      )
      sent.on('error', reject)
      sent.end(body)
    })
  let events = 0
  let failed = 0
  await Promise.all(
    Array.from({ length: CONNECTIONS_PER_THREAD }, async (_, connection) => {
      for (let batch = 0; Date.now() < until; batch++) {
        const prefix = `${tag}t${thread}c${connection}b${batch}e`
        let body = '['
        for (let index = 0; index < BATCH; index++) body += (index ? ',' : '') + head + user + prefix + index + '"}'
        // The relay's count of events stored, or -1 for an answer other than 200.
        const accepted = await post(body + ']')
        if (accepted == BATCH) events += BATCH
        else failed++
      }
    })
  )
  agent.destroy()
  parentPort.postMessage({ events, failed })
} else if (process.argv[2] == '--service') {
  await serveForBench(process.argv[3])
} else if (process.argv[1] == fileURLToPath(import.meta.url)) {
  // `node bench/relay.mjs 5 cluster`: only the cluster against one Redis.
  if (!process.argv.includes('cluster')) {
    printTable(await relayCost(SECONDS))
    printForwardTable(await forwardCost(SECONDS))
  }
  printClusterTable(await clusterCost(SECONDS))
}

/** CPU seconds a process has used so far (utime + stime of /proc/<pid>/stat). */
function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

function freePort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

async function startRedis() {
  if (!existsSync('/usr/bin/redis-server')) throw new Error('/usr/bin/redis-server is missing: apt-get install redis-server')
  const port = await freePort()
  const child = spawn('/usr/bin/redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', tmpdir()], {
    stdio: 'ignore'
  })
  const ping = () =>
    new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1', () => socket.write('PING\r\n'))
      socket.once('data', (data) => {
        socket.destroy()
        resolve(String(data).startsWith('+PONG'))
      })
      socket.once('error', () => resolve(false))
    })
  for (let tries = 0; tries < 200; tries++) {
    if (await ping()) return { child, url: `redis://127.0.0.1:${port}` }
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  throw new Error('redis-server did not start')
}

async function startRelay(env) {
  const child = spawn(process.execPath, [fileURLToPath(new URL('../test/relay/relay-process.mjs', import.meta.url))], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  const port = await new Promise((resolve, reject) => {
    let line = ''
    child.stdout.on('data', (chunk) => {
      line += chunk
      const match = /\{"port":(\d+)\}/.exec(line)
      if (match) resolve(Number(match[1]))
    })
    child.once('exit', (code) => reject(new Error('the relay exited with ' + code)))
  })
  return { child, url: `http://127.0.0.1:${port}/collect` }
}

/** Load on `url` from THREADS threads until `until`: what each thread got stored, and its failures. */
function loadOn(url, tag, until) {
  return Promise.all(
    Array.from(
      { length: THREADS },
      (_, thread) =>
        new Promise((resolve, reject) => {
          const worker = new Worker(fileURLToPath(import.meta.url), { workerData: { url, tag, thread, until } })
          worker.once('message', resolve)
          worker.once('error', reject)
        })
    )
  )
}

/** CPU seconds the processes `pids` have used so far, together. */
function cpuOf(pids) {
  return pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0)
}

/**
 * One run of the relay with a store: `backend` is none for memoryStore(), else the relay's
 * environment for its Redis (REDIS_URL, or REDIS_CLUSTER_NODES) and the processes whose CPU is Redis's.
 */
async function measure(store, backend, run, plannedSeconds) {
  const dir = mkdtempSync(join(tmpdir(), 'relay-bench-'))
  const file = join(dir, 'events.ndjson')
  const relay = await startRelay({ SINK: 'file', SINK_FILE: file, ...(backend ? backend.env : {}) })
  const load = (tag, until) => loadOn(relay.url, tag, until)
  // A second of warm-up (JIT, connections), then the measured window.
  const warm = await load(`r${run}w`, Date.now() + 1000)
  const before = { relay: cpuSeconds(relay.child.pid), redis: backend ? cpuOf(backend.pids) : 0, at: performance.now() }
  const results = await load(`r${run}m`, Date.now() + plannedSeconds * 1000)
  const seconds = (performance.now() - before.at) / 1000
  const relayCpu = cpuSeconds(relay.child.pid) - before.relay
  const redisCpu = backend ? cpuOf(backend.pids) - before.redis : 0
  const events = results.reduce((sum, result) => sum + result.events, 0)
  const failed = results.reduce((sum, result) => sum + result.failed, 0)
  relay.child.kill()
  const lines = statSync(file).size > 0 ? readFileSync(file, 'utf8').split('\n').length - 1 : 0
  rmSync(dir, { recursive: true, force: true })
  // Every event answered 200 is in the file, once.
  const stored = events + warm.reduce((sum, result) => sum + result.events, 0)
  if (lines != stored) throw new Error(`${store}: ${lines} lines in the sink for ${stored} events answered 200`)
  return { events, failed, seconds, relayCpu, redisCpu, perSecond: events / seconds, perCoreSecond: events / relayCpu, lines }
}

/**
 * Measures the relay with each store, RUNS times alternating, for `seconds` each; resolves the
 * medians by store, and the runs. `npm run bench` (bench/run.mjs) calls it too.
 */
export async function relayCost(seconds = SECONDS) {
  if (!existsSync(new URL('../dist/relay.mjs', import.meta.url))) throw new Error('dist/relay.mjs is missing: run `npx rollup -c` first')
  const redis = await startRedis()
  const backends = { memory: null, redis: { env: { REDIS_URL: redis.url }, pids: [redis.child.pid] } }
  const runs = { memory: [], redis: [] }
  try {
    for (let run = 0; run < RUNS; run++) for (const store of ['memory', 'redis']) runs[store].push(await measure(store, backends[store], run, seconds))
  } finally {
    redis.child.kill()
  }
  return { seconds, summary: summarize(runs), runs }
}

/** The medians of each store's runs. */
function summarize(runs) {
  const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]
  const summary = {}
  for (const [store, list] of Object.entries(runs)) {
    if (list.some((result) => result.failed)) throw new Error(store + ': some batches were not answered 200 with all 50 events accepted')
    summary[store] = {
      eventsPerSecond: Math.round(median(list.map((result) => result.perSecond))),
      eventsPerCoreSecond: Math.round(median(list.map((result) => result.perCoreSecond))),
      relayCores: Number(median(list.map((result) => result.relayCpu / result.seconds)).toFixed(2)),
      redisCores: Number(median(list.map((result) => result.redisCpu / result.seconds)).toFixed(2)),
      eventsPerCoreSecondWithRedis: Math.round(median(list.map((result) => result.events / (result.relayCpu + result.redisCpu))))
    }
  }
  return summary
}

/**
 * The relay's store on one Redis against the relay guide's store on Redis Cluster
 * (test/relay/recipes/cluster-store.mjs: node-redis 5, 16 slots) on six redis-server processes
 * of test/relay/redis-cluster.ts, RUNS times alternating, for `seconds` each; resolves the medians
 * and the runs. Redis's CPU on the cluster is all six nodes': replicas copy every write.
 */
export async function clusterCost(seconds = SECONDS) {
  if (!existsSync(new URL('../dist/relay.mjs', import.meta.url))) throw new Error('dist/relay.mjs is missing: run `npx rollup -c` first')
  const out = fileURLToPath(new URL('out/', import.meta.url))
  mkdirSync(out, { recursive: true })
  // In bench/out/, so that what it imports (redis, for the single server's helpers) resolves from the repository's node_modules.
  const { startCluster } = await import(await bundleTs('../test/relay/redis-cluster.ts', out, 'redis-cluster.mjs'))
  const redis = await startRedis()
  const cluster = await startCluster()
  const backends = {
    redis: { env: { REDIS_URL: redis.url }, pids: [redis.child.pid] },
    cluster: { env: { REDIS_CLUSTER_NODES: cluster.rootNodes.map((node) => node.url).join(',') }, pids: cluster.nodes.map((node) => node.pid()) }
  }
  const runs = { redis: [], cluster: [] }
  try {
    for (let run = 0; run < RUNS; run++) {
      for (const store of ['redis', 'cluster']) {
        runs[store].push(await measure(store, backends[store], run, seconds))
        // Each run from an empty store, as the single Redis's runs start from fresh ids.
        if (store == 'cluster') for (const master of await cluster.masters()) await cluster.command(master.port, 'FLUSHALL')
      }
    }
  } finally {
    redis.child.kill()
    await cluster.close()
  }
  return { seconds, summary: summarize(runs), runs }
}

/** Prints what clusterCost measured. */
function printClusterTable({ seconds, summary, runs }) {
  console.log(
    `\nredisStore on one redis-server against Redis Cluster (3 masters, 3 replicas, shards: 16), node-redis 5; ${THREADS} load threads × ${CONNECTIONS_PER_THREAD} keep-alive connections, ${BATCH}-event batches; median of ${RUNS} runs of ${seconds} s\n`
  )
  console.log(
    '| Redis | events/s (wall) | events per relay CPU-second | relay CPU (cores) | redis-server CPU (cores, all nodes) | events per CPU-second, relay + Redis |\n|---|---|---|---|---|---|'
  )
  for (const store of ['redis', 'cluster']) {
    const { eventsPerSecond, eventsPerCoreSecond, relayCores, redisCores, eventsPerCoreSecondWithRedis } = summary[store]
    const name = store == 'redis' ? 'one redis-server' : 'Redis Cluster, 6 nodes'
    console.log(`| ${name} | ${eventsPerSecond} | ${eventsPerCoreSecond} | ${relayCores} | ${redisCores} | ${eventsPerCoreSecondWithRedis} |`)
  }
  const cost = summary.redis.eventsPerCoreSecond / summary.cluster.eventsPerCoreSecond
  const withRedis = summary.redis.eventsPerCoreSecondWithRedis / summary.cluster.eventsPerCoreSecondWithRedis
  console.log(`\nRedis Cluster: ${cost.toFixed(2)}× the relay's CPU per event of one Redis, ${withRedis.toFixed(2)}× counting Redis's CPU too.`)
  if (process.argv.includes('--json')) console.log(JSON.stringify({ date: new Date().toISOString(), node: process.version, summary, runs }))
}

/** Prints what relayCost measured, with the command and the date. */
function printTable({ seconds, summary, runs }) {
  const cost = summary.memory.eventsPerCoreSecond / summary.redis.eventsPerCoreSecond
  console.log(
    `\n${new Date().toISOString().slice(0, 10)}, node bench/relay.mjs ${seconds}, Node ${process.version}, ${availableParallelism()} cores; ` +
      `${THREADS} load threads × ${CONNECTIONS_PER_THREAD} keep-alive connections, ${BATCH}-event batches, fileSink; median of ${RUNS} runs of ${seconds} s\n`
  )
  console.log(
    '| store | events/s (wall) | events per relay CPU-second | relay CPU (cores) | redis-server CPU (cores) | events per CPU-second, relay + Redis |\n|---|---|---|---|---|---|'
  )
  for (const store of ['memory', 'redis']) {
    const { eventsPerSecond, eventsPerCoreSecond, relayCores, redisCores, eventsPerCoreSecondWithRedis } = summary[store]
    const name = store == 'memory' ? 'memoryStore()' : 'redisStore(node-redis 5)'
    console.log(`| ${name} | ${eventsPerSecond} | ${eventsPerCoreSecond} | ${relayCores} | ${redisCores} | ${eventsPerCoreSecondWithRedis} |`)
  }
  const withRedis = summary.memory.eventsPerCoreSecondWithRedis / summary.redis.eventsPerCoreSecondWithRedis
  console.log(`\nThe Redis store: ${cost.toFixed(2)}× the relay's CPU per event, ${withRedis.toFixed(2)}× counting redis-server's CPU too.`)
  if (process.argv.includes('--json')) console.log(JSON.stringify({ date: new Date().toISOString(), node: process.version, summary, runs }))
}

/**
 * The service's side of the forwarding measure, in a process of its own (`--service <format>`):
 * the stand-in for 'spec', bundled from TypeScript beforehand (STAND_IN_FILE); for 'batch' a
 * collector that takes JSON arrays. It sends its URL to the bench, then its counts when asked.
 */
async function serveForBench(format) {
  // The bench gone, this process goes too.
  process.on('disconnect', () => process.exit(0))
  if (format == 'spec') {
    const { startServiceStandIn } = await import(process.env.STAND_IN_FILE)
    const standIn = await startServiceStandIn({ keys: ['KEY'], accept: 'header' })
    process.send({ url: standIn.url })
    process.on('message', () => process.send({ stored: standIn.events.length, refused: standIn.refused.length }))
    return
  }
  let stored = 0
  let refused = 0
  const server = createHttpServer((request, response) => {
    const chunks = []
    request.on('data', (chunk) => chunks.push(chunk))
    request.on('end', () => {
      const events = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      if (Array.isArray(events)) stored += events.length
      else refused++
      response.writeHead(Array.isArray(events) ? 200 : 400, { 'content-type': 'application/json' }).end('{}')
    })
  })
  server.listen(0, '127.0.0.1', () => process.send({ url: `http://127.0.0.1:${server.address().port}/v3/feedback` }))
  process.on('message', () => process.send({ stored, refused }))
}

/** A TypeScript file of the repository (`source`, relative to bench/) and what it imports of ours, compiled into one ES module `dir`/`name`. */
async function bundleTs(source, dir, name) {
  const { rollup } = await import('rollup')
  const ts = (await import('typescript')).default
  const compilerOptions = { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 }
  const bundle = await rollup({
    input: fileURLToPath(new URL(source, import.meta.url)),
    // Node's modules and packages stay imports; our files are bundled.
    external: (id) => !id.startsWith('.') && !id.startsWith('/'),
    plugins: [
      {
        name: 'typescript',
        // The sources import each other without extensions, as the library's build resolves them.
        resolveId: (id, importer) => (importer && id.startsWith('.') && !/\.[cm]?[jt]s$/.test(id) ? join(dirname(importer), id + '.ts') : null),
        transform: (code, id) => (id.endsWith('.ts') ? ts.transpileModule(code, { fileName: id, compilerOptions }).outputText : null)
      }
    ]
  })
  const file = join(dir, name)
  await bundle.write({ file, format: 'es' })
  await bundle.close()
  return file
}

async function startService(format, standInFile) {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--service', format], {
    env: { ...process.env, STAND_IN_FILE: standInFile },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc']
  })
  const url = await new Promise((resolve, reject) => {
    child.once('message', (message) => resolve(message.url))
    child.once('exit', (code) => reject(new Error('the service exited with ' + code)))
  })
  const counts = () =>
    new Promise((resolve) => {
      child.once('message', resolve)
      child.send('counts')
    })
  return { child, url, counts }
}

async function measureForward(format, standInFile, run, plannedSeconds) {
  const service = await startService(format, standInFile)
  let relay
  try {
    relay = await startRelay({ SINK: 'forward', FORWARD_URL: service.url, FORWARD_FORMAT: format })
    return await loadThrough(relay, service, format, run, plannedSeconds)
  } finally {
    relay?.child.kill()
    service.child.kill()
  }
}

/** A second of warm-up, then the measured window: events stored, and the CPU of the relay and of the service. */
async function loadThrough(relay, service, format, run, plannedSeconds) {
  const warm = await loadOn(relay.url, `f${run}w`, Date.now() + 1000)
  const before = { relay: cpuSeconds(relay.child.pid), service: cpuSeconds(service.child.pid), at: performance.now() }
  const results = await loadOn(relay.url, `f${run}m`, Date.now() + plannedSeconds * 1000)
  const seconds = (performance.now() - before.at) / 1000
  const relayCpu = cpuSeconds(relay.child.pid) - before.relay
  const serviceCpu = cpuSeconds(service.child.pid) - before.service
  const { stored, refused } = await service.counts()
  const events = results.reduce((sum, result) => sum + result.events, 0)
  const failed = [...warm, ...results].reduce((sum, result) => sum + result.failed, 0)
  // Every event answered 200 reached the service, once, and the service refused nothing.
  const answered = events + warm.reduce((sum, result) => sum + result.events, 0)
  if (stored != answered || refused)
    throw new Error(`${format}: the service stored ${stored} and refused ${refused} requests for ${answered} events answered 200`)
  return {
    events,
    failed,
    seconds,
    relayCpu,
    serviceCpu,
    perSecond: events / seconds,
    perCoreSecond: events / relayCpu,
    servicePerCoreSecond: events / serviceCpu
  }
}

/**
 * The relay forwarding with forwardSink (memoryStore()), in format 'spec' to the service
 * stand-in and in format 'batch' to a collector of arrays, RUNS times alternating, for `seconds`
 * each; resolves the medians by format, and the runs. `npm run bench` (bench/run.mjs) calls it too.
 */
export async function forwardCost(seconds = SECONDS) {
  if (!existsSync(new URL('../dist/relay.mjs', import.meta.url))) throw new Error('dist/relay.mjs is missing: run `npx rollup -c` first')
  const dir = mkdtempSync(join(tmpdir(), 'relay-forward-bench-'))
  const runs = { spec: [], batch: [] }
  try {
    const standInFile = await bundleTs('../test/support/service-stand-in.ts', dir, 'service-stand-in.mjs')
    for (let run = 0; run < RUNS; run++) for (const format of ['spec', 'batch']) runs[format].push(await measureForward(format, standInFile, run, seconds))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]
  const summary = {}
  for (const format of ['spec', 'batch']) {
    const list = runs[format]
    if (list.some((result) => result.failed)) throw new Error(format + ': some batches were not answered 200 with all 50 events accepted')
    summary[format] = {
      eventsPerSecond: Math.round(median(list.map((result) => result.perSecond))),
      eventsPerCoreSecond: Math.round(median(list.map((result) => result.perCoreSecond))),
      relayCores: Number(median(list.map((result) => result.relayCpu / result.seconds)).toFixed(2)),
      serviceCores: Number(median(list.map((result) => result.serviceCpu / result.seconds)).toFixed(2)),
      serviceEventsPerCoreSecond: Math.round(median(list.map((result) => result.servicePerCoreSecond)))
    }
  }
  return { seconds, summary, runs }
}

/** Prints what forwardCost measured. */
function printForwardTable({ seconds, summary, runs }) {
  console.log(
    `\nforwardSink (memoryStore()), the service in a process of its own; ${THREADS} load threads × ${CONNECTIONS_PER_THREAD} keep-alive connections, ${BATCH}-event batches; median of ${RUNS} runs of ${seconds} s\n`
  )
  console.log(
    '| format | events/s (wall) | events per relay CPU-second | relay CPU (cores) | service CPU (cores) | events per service CPU-second |\n|---|---|---|---|---|---|'
  )
  for (const format of ['spec', 'batch']) {
    const { eventsPerSecond, eventsPerCoreSecond, relayCores, serviceCores, serviceEventsPerCoreSecond } = summary[format]
    const name = format == 'spec' ? "'spec': the stand-in, one request per event, pipelined" : "'batch': arrays of up to 60 KiB"
    console.log(`| ${name} | ${eventsPerSecond} | ${eventsPerCoreSecond} | ${relayCores} | ${serviceCores} | ${serviceEventsPerCoreSecond} |`)
  }
  const cost = summary.batch.eventsPerCoreSecond / summary.spec.eventsPerCoreSecond
  console.log(`\nOne request per event: ${cost.toFixed(2)}× the relay's CPU per event of batches.`)
  if (process.argv.includes('--json')) console.log(JSON.stringify({ date: new Date().toISOString(), node: process.version, summary, runs }))
}
