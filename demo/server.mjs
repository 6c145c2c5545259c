// This module is `npm run demo`: it starts the demo store, the reference collector and the live
// inspector on one port.
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { buildIfStale } from './build.mjs'

const DEFAULT_DATA = fileURLToPath(new URL('./data/events.ndjson', import.meta.url))

// Run as a command (`npm run demo`), the demo builds the library first where dist/ is missing or
// older than the source, before the builds are imported.
const command = process.argv[1] == fileURLToPath(import.meta.url)
if (command) {
  process.chdir(fileURLToPath(new URL('..', import.meta.url)))
  await buildIfStale()
}
const { DEMO_KEY, keysFromEnv, startInspect } = await import('../dist/collector.mjs')
const { identityCookie } = await import('../dist/server.mjs')
// These read the builds too, so they come after them.
const { handleDiscovery } = await import('./discovery.mjs')
const { handleStore } = await import('./store.mjs')

/** Whether `host` is one of this machine's own addresses, which no other machine reaches. */
const isLoopback = (host) => host == 'localhost' || host == '::1' || /^127\./.test(host)

/**
 * Starts the demo on `host:port` (port 0 picks a free one) and resolves once it listens.
 * Tests start it the same way the command line does.
 *
 * The store's pages send `key`; the collector and the discovery routes take it and `keys`.
 * The other options, and what this resolves with, are those of startInspect (src/collector/server.ts):
 * the collector and the inspector, to which the demo adds its store and the discovery routes.
 *
 * The store's "Inspector" links carry the inspector's token, so that they open it, while the
 * demo listens on this machine's own addresses only (the default, 127.0.0.1). Listening on
 * others, its pages would hand the token, and every shopper's identity the inspector shows, to
 * anyone who loads one: the links are then plain, and the printed URL is the way in.
 */
export function startDemo({ collectorPath = '/v3/feedback', dataFile = DEFAULT_DATA, key = DEMO_KEY, keys = [], ...options } = {}) {
  const accepted = new Set([key, ...keys])
  const inspectorToken = options.inspectorToken || randomBytes(24).toString('base64url')
  const inspectorLink = isLoopback(options.host ?? '127.0.0.1') ? '/inspector?token=' + encodeURIComponent(inspectorToken) : '/inspector'
  const context = { key, endpoint: collectorPath, inspectorLink }
  const catalog = JSON.parse(readFileSync(new URL('./catalog.json', import.meta.url), 'utf8'))

  const routes = ({ collector, activity }) => {
    // The "recently viewed" route reads the product view-pages the collector has seen for this uid.
    const viewed = (uid) => {
      const ids = collector
        .recent()
        .reverse()
        .filter(({ type, envelope }) => type == 'accepted' && envelope.event == 'view-page' && envelope.user.uid === uid)
        .map(({ envelope }) => envelope.properties.item_id)
      return [...new Set(ids)].map((id) => catalog.find((product) => product.id == id)).filter(Boolean)
    }
    return async (request, response, url) => {
      if (await handleDiscovery(request, response, url, { keys: accepted, viewed, responded: activity.responded })) return true
      // Safari caps script-written cookies at 7 days, so the pages renew the shopper's uid from
      // the server (README "Safari's 7-day cookie cap").
      if (request.method == 'GET' && (request.headers.accept || '').includes('text/html')) {
        response.setHeader('set-cookie', identityCookie(request.headers.cookie, { secure: false }).setCookie)
      }
      return handleStore(request, response, context)
    }
  }
  return startInspect({ ...options, inspectorToken, collectorPath, dataFile, keys: accepted, routes, seesDiscovery: true })
}

if (command) {
  const demo = await startDemo({
    port: Number(process.env.PORT || 8080),
    host: process.env.HOST || '127.0.0.1',
    collectorPath: process.env.COLLECTOR_PATH || '/v3/feedback',
    dataFile: process.env.DATA_FILE || DEFAULT_DATA,
    keys: keysFromEnv(process.env),
    inspectorToken: process.env.INSPECTOR_TOKEN
  })
  console.log(`Store:      ${demo.url}/`)
  console.log(`SPA:        ${demo.url}/spa`)
  console.log(`Inspector:  ${demo.inspectorUrl}`)
  console.log(`Collector:  POST ${demo.url}${process.env.COLLECTOR_PATH || '/v3/feedback'}`)
  console.log('Press Ctrl-C to stop.')
  const stop = () => demo.close().then(() => process.exit(0))
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
}
