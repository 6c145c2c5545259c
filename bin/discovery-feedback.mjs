#!/usr/bin/env node
// This is `npx discovery-feedback inspect`: it starts the reference collector and the live
// inspector alone, without the demo store, for a staging shop's tracker to point at (README
// "Inspector as an integration debugger"). `npx discovery-feedback shopify-pixel` prints the
// code of a Shopify custom pixel (README "Shopify").
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { DEMO_KEY, keysFromEnv, startInspect } from '../dist/collector.mjs'
import { printCustomPixel } from './custom-pixel.mjs'

if (process.argv[2] == 'shopify-pixel') {
  printCustomPixel(process.argv.slice(3))
  process.exit(0)
}

const USAGE = `Usage: discovery-feedback inspect [options]

Starts the reference collector and the live inspector on one port.

  --port <n>              port to listen on (default 8080; 0 picks a free one)
  --host <address>        address to listen on (default 127.0.0.1, this machine only)
  --keys <k1,k2>          API keys the collector takes (env COLLECTOR_KEYS)
  --keys-file <file>      more keys, one a line (env COLLECTOR_KEYS_FILE)
  --token <secret>        the inspector's token (env INSPECTOR_TOKEN; random by default)
  --data-file <file>      where accepted events go (default ./discovery-feedback-events.ndjson)
  --collector-path <path> the collector's path (default /v3/feedback)
  --product-pattern <re>  RegExp of product page URLs, for the view-page lint (default \\/products?\\/)
  -h, --help              this text`

function fail(message) {
  console.error(`discovery-feedback: ${message}\n\n${USAGE}`)
  process.exit(2)
}

let parsed
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: {
      port: { type: 'string', default: '8080' },
      host: { type: 'string', default: '127.0.0.1' },
      keys: { type: 'string' },
      'keys-file': { type: 'string' },
      token: { type: 'string' },
      'data-file': { type: 'string', default: 'discovery-feedback-events.ndjson' },
      'collector-path': { type: 'string', default: '/v3/feedback' },
      'product-pattern': { type: 'string' },
      help: { type: 'boolean', short: 'h' }
    }
  })
} catch (error) {
  fail(error.message)
}
const { values, positionals } = parsed
if (values.help) {
  console.log(USAGE)
  process.exit(0)
}
if (positionals[0] != 'inspect' || positionals.length > 1)
  fail(positionals.length ? `unknown command ${positionals.join(' ')}` : 'which command? inspect or shopify-pixel')

const port = Number(values.port)
if (!/^\d+$/.test(values.port) || port > 65535) fail(`--port must be a number from 0 to 65535, got ${values.port}`)
if (!values['collector-path'].startsWith('/')) fail('--collector-path must start with /')
let productUrl
try {
  productUrl = values['product-pattern'] == null ? undefined : new RegExp(values['product-pattern'])
} catch (error) {
  fail(`--product-pattern: ${error.message}`)
}
const env = process.env
let keys
try {
  // A flag wins over its environment variable.
  keys = keysFromEnv({ COLLECTOR_KEYS: values.keys ?? env.COLLECTOR_KEYS, COLLECTOR_KEYS_FILE: values['keys-file'] ?? env.COLLECTOR_KEYS_FILE })
} catch (error) {
  fail(`cannot read the keys file: ${error.message}`)
}
// Without keys the collector takes the demo's key, so that a first try with the demo's pages works.
const taken = keys.length ? keys : [DEMO_KEY]
const dataFile = resolve(values['data-file'])

let started
try {
  started = await startInspect({
    port,
    host: values.host,
    collectorPath: values['collector-path'],
    dataFile,
    keys: taken,
    inspectorToken: values.token ?? env.INSPECTOR_TOKEN,
    productUrl
  })
} catch (error) {
  // Either side can fail: the address may be in use or not ours, and the data file may be a
  // folder or not writable.
  console.error(`discovery-feedback: cannot start on ${values.host}:${port} with events in ${dataFile}: ${error.message}`)
  process.exit(1)
}
console.log(`Inspector:  ${started.inspectorUrl}`)
console.log(`Collector:  POST ${started.url}${values['collector-path']}`)
console.log(`Keys:       ${keys.length ? `${keys.length} from --keys, --keys-file or the environment` : 'demo-key only (give yours with --keys)'}`)
console.log(`Events in:  ${dataFile}`)
if (!['127.0.0.1', '::1', 'localhost'].includes(values.host)) {
  console.log(`Listening beyond this machine on ${values.host}, over plain HTTP: keep the token to yourself.`)
}
console.log('Press Ctrl-C to stop.')
const stop = () => started.close().then(() => process.exit(0))
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
