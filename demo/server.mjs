// `npm run demo`: the demo store, the reference collector and the live inspector on one port.
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { fileURLToPath } from 'node:url'
import { createCollector } from './collector.mjs'
import { handleDiscovery } from './discovery.mjs'
import { serveInspector, streamEvents } from './inspector.mjs'
import { handleStore } from './store.mjs'
import { identityCookie } from '../dist/server.mjs'

const DEFAULT_DATA = fileURLToPath(new URL('./data/events.ndjson', import.meta.url))

/**
 * Starts the demo on `host:port` (port 0 picks a free one) and resolves once it listens.
 * Tests start it the same way the command line does.
 */
export function startDemo({ port = 8080, host = '127.0.0.1', collectorPath = '/v3/feedback', dataFile = DEFAULT_DATA, key = 'demo-key', maxBodyBytes } = {}) {
  const collector = createCollector({ file: dataFile, maxBodyBytes })
  const context = { key, endpoint: collectorPath }
  // "Recently viewed" comes from the product view-pages the collector has seen for this uid.
  const catalog = JSON.parse(readFileSync(new URL('./catalog.json', import.meta.url), 'utf8'))
  const viewed = (user) => {
    const ids = collector
      .recent()
      .reverse()
      .filter(({ type, envelope }) => type == 'accepted' && envelope.event == 'view-page' && envelope.user.uid == (user && user.uid))
      .map(({ envelope }) => envelope.properties.item_id)
    return [...new Set(ids)].map((id) => catalog.find((product) => product.id == id)).filter(Boolean)
  }
  const server = createServer((request, response) => {
    const path = request.url.split('?')[0]
    if (path == collectorPath) return collector.handle(request, response)
    if (path == '/inspector') return serveInspector(response)
    if (path == '/inspector/events') return streamEvents(collector, request, response)
    if (handleDiscovery(request, response, { key, viewed })) return
    // Against Safari's 7-day cap on script-written cookies, the pages renew the shopper's uid
    // from the server (README "Safari's 7-day cookie cap").
    if (request.method == 'GET' && (request.headers.accept || '').includes('text/html')) {
      response.setHeader('set-cookie', identityCookie(request.headers.cookie, { secure: false }).setCookie)
    }
    if (!handleStore(request, response, context)) {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found')
    }
  })
  return new Promise((resolve) => {
    server.listen(port, host, () => {
      const url = `http://${host}:${server.address().port}`
      resolve({
        url,
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
    dataFile: process.env.DATA_FILE || DEFAULT_DATA
  })
  console.log(`Store:      ${demo.url}/`)
  console.log(`SPA:        ${demo.url}/spa`)
  console.log(`Inspector:  ${demo.url}/inspector`)
  console.log(`Collector:  POST ${demo.url}${process.env.COLLECTOR_PATH || '/v3/feedback'}`)
  console.log('Press Ctrl-C to stop.')
  const stop = () => demo.close().then(() => process.exit(0))
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
}
