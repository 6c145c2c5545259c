// One relay instance in a process of its own, for the multi-instance tests and the bench: the
// built relay (dist/relay.mjs) behind node:http, on a free loopback port it prints as one JSON
// line on stdout ({"port":…}). Configured by the environment:
//   KEYS          the keys it takes, comma-separated (default KEY)
//   REDIS_URL     redisStore over a node-redis 5 client made as the docs make one (offline
//                 queue and reconnection on); without it, memoryStore()
//   STORE_TIMEOUT_MS  redisStore's timeoutMs
//   REDIS_CLUSTER_NODES  the relay guide's store on Redis Cluster (recipes/cluster-store.mjs, node-redis
//                 5), or with REDIS_CLIENT=ioredis its ioredis version (recipes/cluster-store-ioredis.mjs)
//   SERVER_SECRETS  the relay's serverSecrets, comma-separated
//   LOG_ERRORS    prints what reaches onError on stderr, one line each
//   SINK          'append' (default): each batch appended to SINK_FILE as NDJSON with
//                 fs.appendFileSync, so a batch is on disk once the sink resolves;
//                 'file': the package's fileSink(SINK_FILE);
//                 'forward': the package's forwardSink to FORWARD_URL, in FORWARD_FORMAT:
//                 'batch' (default here: the sink-down test's service reads arrays) or 'spec'
//                 (one SPEC envelope a request, the package's default); FORWARD_MAX_IN_FLIGHT
//                 its maxInFlight, else the package's default for that format
//   BOTS          the relay's bots option, 'keep' by default here: the tests' senders are Node's
//                 fetch and headless browsers, which the package's default 'drop' would drop
//   CLAIM_MS      the relay's claimMs
//   RATE_LIMIT    the relay's rateLimit as 'burst,perSecond', 'off', or 'default' for the package's own;
//                 by default one that no load here reaches (all of it comes from 127.0.0.1), so the
//                 bucket is paid for and refuses nothing
//   IP_HEADER     the relay's ipHeader: a test's clients, all on 127.0.0.1, name their address in it
//   DEAD_LETTER_FILE  the relay's deadLetter, the package's fileSink of that file
//   SINK_DELAY_MS  the sink waits this long before it writes: requests that come together overlap
//   DIE_AFTER_SINK_CALLS  dies by SIGKILL right after the sink's Nth call resolved, before the
//                 store hears of it: the window in which an event can reach the sink twice
//   HOLD_SINK_CALL  the sink's Nth call writes its batch and then never resolves, and the process
//                 prints {"held":N} on stdout: a request certain to be unanswered when it is killed
// GET /__stats answers the process's memory (after a full garbage collection with ?gc) and the
// relay's error and sink call counts.
import { appendFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { createClient } from 'redis'
import { createRelay, fileSink, forwardSink, memoryStore, redisStore, toNodeHandler } from '../../dist/relay.mjs'

const env = process.env
let errors = 0
let sinkCalls = 0

let store = memoryStore()
if (env.REDIS_URL) {
  const client = createClient({ url: env.REDIS_URL })
  // A client without an error listener throws each reconnection failure at the process.
  client.on('error', () => {})
  await client.connect()
  store = redisStore(client, env.STORE_TIMEOUT_MS ? { timeoutMs: Number(env.STORE_TIMEOUT_MS) } : {})
} else if (env.REDIS_CLUSTER_NODES) {
  const recipe = env.REDIS_CLIENT == 'ioredis' ? './recipes/cluster-store-ioredis.mjs' : './recipes/cluster-store.mjs'
  store = (await import(recipe)).store
}

let sink
if (env.SINK == 'forward') {
  const maxInFlight = env.FORWARD_MAX_IN_FLIGHT ? Number(env.FORWARD_MAX_IN_FLIGHT) : undefined
  sink = forwardSink({ url: env.FORWARD_URL, format: env.FORWARD_FORMAT || 'batch', maxInFlight, timeout: 5000 })
} else if (env.SINK == 'file') sink = fileSink(env.SINK_FILE)
else sink = async (events) => appendFileSync(env.SINK_FILE, events.map((event) => JSON.stringify(event) + '\n').join(''))

const dieAfter = Number(env.DIE_AFTER_SINK_CALLS) || 0
const holdAt = Number(env.HOLD_SINK_CALL) || 0
const sinkDelayMs = Number(env.SINK_DELAY_MS) || 0
const counted = async (events) => {
  if (sinkDelayMs) await new Promise((resolve) => setTimeout(resolve, sinkDelayMs))
  await sink(events)
  const call = ++sinkCalls
  if (call == holdAt) {
    console.log(JSON.stringify({ held: holdAt }))
    await new Promise(() => {})
  }
  if (call == dieAfter) process.kill(process.pid, 'SIGKILL')
}

function rateLimitOf(text) {
  if (text == 'off') return false
  if (text == 'default') return undefined
  const [burst, perSecond] = text.split(',').map(Number)
  return { burst, perSecond }
}

const relay = createRelay({
  keys: (env.KEYS || 'KEY').split(','),
  sink: counted,
  store,
  claimMs: env.CLAIM_MS ? Number(env.CLAIM_MS) : undefined,
  bots: env.BOTS || 'keep',
  rateLimit: rateLimitOf(env.RATE_LIMIT || '1e12,1e12'),
  ipHeader: env.IP_HEADER || undefined,
  deadLetter: env.DEAD_LETTER_FILE ? fileSink(env.DEAD_LETTER_FILE) : undefined,
  serverSecrets: env.SERVER_SECRETS ? env.SERVER_SECRETS.split(',') : undefined,
  onError: (error) => {
    errors++
    if (env.LOG_ERRORS) console.error(new Date().toISOString().slice(11) + ' ' + error.message)
  }
})
const handle = toNodeHandler(relay)

const server = createServer((request, response) => {
  if (request.method == 'GET' && request.url.startsWith('/__stats')) {
    // ?gc: what is still held once garbage is collected (started with --expose-gc).
    if (request.url.includes('gc')) globalThis.gc?.()
    response.writeHead(200, { 'content-type': 'application/json' })
    response.end(JSON.stringify({ ...process.memoryUsage(), errors, sinkCalls }))
    return
  }
  handle(request, response)
})
server.listen(Number(env.PORT) || 0, '127.0.0.1', () => {
  console.log(JSON.stringify({ port: server.address().port }))
})
process.on('SIGTERM', () => {
  server.close(() => process.exit(0))
  server.closeAllConnections()
})
