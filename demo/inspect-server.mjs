// This module starts one HTTP server with the reference collector and the live inspector on one
// port. It is all that `npx discovery-feedback inspect` starts, and `npm run demo` adds its store
// to it (demo/server.mjs). The inspector's own routes are in demo/inspector-routes.mjs.
import { createServer } from 'node:http'
import { DEMO_KEY, newToken } from './access.mjs'
import { createActivity } from './activity.mjs'
import { createCollector } from './collector.mjs'
import { createInspector } from './inspector-routes.mjs'

/** Returns the request target as a URL, or null for one that is not a plain path (`//`, `//%`, `http://…`). */
function target(request) {
  try {
    const url = new URL(request.url, 'http://demo')
    return url.host == 'demo' && request.url.startsWith('/') ? url : null
  } catch {
    return null
  }
}

const plain = (response, status, text, headers = {}) => response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers }).end(text)

/**
 * Starts the collector and the inspector on `host:port` (port 0 picks a free one) and resolves
 * once it listens. The collector takes the API keys in `keys` and stores to `dataFile`.
 *
 * The inspector needs `inspectorToken` (a random one by default), given once in the URL this
 * resolves with. `requestTimeout` and `headersTimeout` (ms) bound how long a client may take to
 * send a request; they never cut a response, so inspector feeds stay open. `maxFeedBytes`
 * (1 MiB) is how much an inspector feed may leave unread before it is dropped. `productUrl` is
 * the RegExp of product page URLs for the lints.
 *
 * `routes({ collector, activity })` may return a handler for further requests, resolving false
 * for a request it does not serve; with it, `seesDiscovery` says that it answers the discovery
 * routes and reports their rids to `activity.responded`.
 */
export function startInspect({
  port = 8080,
  host = '127.0.0.1',
  collectorPath = '/v3/feedback',
  dataFile,
  keys = [DEMO_KEY],
  inspectorToken,
  maxBodyBytes,
  maxFeedBytes,
  productUrl,
  requestTimeout = 10000,
  headersTimeout = 5000,
  routes,
  seesDiscovery = false
}) {
  const token = inspectorToken || newToken()
  // Node refuses a headers timeout longer than the request timeout.
  const headersLimit = Math.min(headersTimeout, requestTimeout)
  const collector = createCollector({ file: dataFile, maxBodyBytes, keys })
  const activity = createActivity({ collector, seesDiscovery, productUrl })
  const inspector = createInspector({ activity, token, maxFeedBytes })
  const more = routes ? routes({ collector, activity }) : async () => false

  async function route(request, response) {
    const url = target(request)
    if (!url) return plain(response, 400, 'Bad request target')
    const path = url.pathname
    if (path == collectorPath) return collector.handle(request, response)
    if (path == '/inspector') return inspector.servePage(request, response, url)
    if (path == '/inspector/events') return inspector.streamEvents(request, response, url)
    if (!(await more(request, response, url))) plain(response, 404, 'Not found')
  }

  const server = createServer(
    {
      requestTimeout,
      headersTimeout: headersLimit,
      // Node looks for requests past their timeouts this often (every 30 s by default, longer than ours).
      connectionsCheckingInterval: Math.min(1000, headersLimit / 4)
    },
    // Whatever one request makes a handler throw, then or later, is answered for that request
    // alone, and the process and every other connection carry on.
    (request, response) =>
      route(request, response).catch((error) => {
        // The log shows the path only, since the query may carry the inspector's token.
        console.error(`discovery-feedback: ${request.method} ${String(request.url).split('?')[0]} failed:`, error)
        if (response.headersSent || request.socket.destroyed) response.destroy()
        // The request may not have been read to its end, so the connection cannot carry another.
        else plain(response, 500, 'Internal error', { connection: 'close' })
      })
  )
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      // A URL puts an IPv6 host in brackets.
      const url = `http://${host.includes(':') ? `[${host}]` : host}:${server.address().port}`
      resolve({
        url,
        inspectorUrl: `${url}/inspector?token=${encodeURIComponent(token)}`,
        inspectorToken: token,
        collector,
        activity,
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
