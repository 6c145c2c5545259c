// `npm run demo`: the demo store, the reference collector and the live inspector on one port.
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { fileURLToPath } from 'node:url'
import { DEMO_KEY, keysFromEnv, newToken } from './access.mjs'
import { createCollector } from './collector.mjs'
import { handleDiscovery } from './discovery.mjs'
import { createInspector } from './inspector.mjs'
import { handleStore } from './store.mjs'
import { identityCookie } from '../dist/server.mjs'

const DEFAULT_DATA = fileURLToPath(new URL('./data/events.ndjson', import.meta.url))

/** The request target as a URL; null for one that is not a plain path (`//`, `//%`, `http://…`). */
function target(request) {
  try {
    const url = new URL(request.url, 'http://demo')
    return url.host == 'demo' && request.url.startsWith('/') ? url : null
  } catch {
    return null
  }
}

const plain = (response, status, text, headers = {}) =>
  response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers }).end(text)

/**
 * Starts the demo on `host:port` (port 0 picks a free one) and resolves once it listens.
 * Tests start it the same way the command line does.
 *
 * The store's pages send `key`; the collector and the discovery routes take it and `keys`.
 * The inspector needs `inspectorToken` (a random one by default), given once in the URL the
 * command line prints. `requestTimeout` and `headersTimeout` (ms) bound how long a client may
 * take to send a request; they never cut a response, so inspector feeds stay open.
 * `maxFeedBytes` (1 MiB) is how much an inspector feed may leave unread before it is dropped.
 */
export function startDemo({
  port = 8080,
  host = '127.0.0.1',
  collectorPath = '/v3/feedback',
  dataFile = DEFAULT_DATA,
  key = DEMO_KEY,
  keys = [],
  inspectorToken,
  maxBodyBytes,
  maxFeedBytes,
  requestTimeout = 10000,
  headersTimeout = 5000
} = {}) {
  const token = inspectorToken || newToken()
  // Node refuses a headers timeout longer than the request timeout.
  const headersLimit = Math.min(headersTimeout, requestTimeout)
  const accepted = new Set([key, ...keys])
  const collector = createCollector({ file: dataFile, maxBodyBytes, keys: accepted })
  const inspector = createInspector({ collector, token, maxFeedBytes })
  const context = { key, endpoint: collectorPath }
  // "Recently viewed" comes from the product view-pages the collector has seen for this uid.
  const catalog = JSON.parse(readFileSync(new URL('./catalog.json', import.meta.url), 'utf8'))
  const viewed = (uid) => {
    const ids = collector
      .recent()
      .reverse()
      .filter(({ type, envelope }) => type == 'accepted' && envelope.event == 'view-page' && envelope.user.uid === uid)
      .map(({ envelope }) => envelope.properties.item_id)
    return [...new Set(ids)].map((id) => catalog.find((product) => product.id == id)).filter(Boolean)
  }

  async function route(request, response) {
    const url = target(request)
    if (!url) return plain(response, 400, 'Bad request target')
    const path = url.pathname
    if (path == collectorPath) return collector.handle(request, response)
    if (path == '/inspector') return inspector.servePage(request, response, url)
    if (path == '/inspector/events') return inspector.streamEvents(request, response, url)
    if (await handleDiscovery(request, response, url, { keys: accepted, viewed })) return
    // Against Safari's 7-day cap on script-written cookies, the pages renew the shopper's uid
    // from the server (README "Safari's 7-day cookie cap").
    if (request.method == 'GET' && (request.headers.accept || '').includes('text/html')) {
      response.setHeader('set-cookie', identityCookie(request.headers.cookie, { secure: false }).setCookie)
    }
    if (!(await handleStore(request, response, context))) plain(response, 404, 'Not found')
  }

  const server = createServer(
    {
      requestTimeout,
      headersTimeout: headersLimit,
      // How often Node looks for requests past their timeouts (30 s by default, longer than ours).
      connectionsCheckingInterval: Math.min(1000, headersLimit / 4)
    },
    // Whatever one request makes a handler throw, then or later, is answered for that request
    // alone: the process and every other connection carry on.
    (request, response) =>
      route(request, response).catch((error) => {
        console.error(`demo: ${request.method} ${request.url} failed:`, error)
        if (response.headersSent || request.socket.destroyed) response.destroy()
        // The request may not have been read to its end: the connection cannot carry another.
        else plain(response, 500, 'Internal error', { connection: 'close' })
      })
  )
  return new Promise((resolve) => {
    server.listen(port, host, () => {
      const url = `http://${host}:${server.address().port}`
      resolve({
        url,
        inspectorUrl: `${url}/inspector?token=${encodeURIComponent(token)}`,
        inspectorToken: token,
        collector,
        server,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections()
            server.close(() => {
              collector.close()
              done()
            })
          })
      })
    })
  })
}

if (process.argv[1] == fileURLToPath(import.meta.url)) {
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
