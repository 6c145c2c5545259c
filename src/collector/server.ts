// This module starts one HTTP server with the reference collector and the live inspector on one
// port. It is all that `npx discovery-feedback inspect` starts, and `npm run demo` adds its store
// to it (demo/server.mjs). The inspector's own routes are in inspector.ts.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { DEMO_KEY, newToken } from './access'
import { createActivity } from './activity'
import { createCollector } from './collector'
import { createInspector } from './inspector'
import type { Activity, Collector } from './types'

/** Further routes beside the collector and the inspector: resolves false for a request it does not serve. */
export type MoreRoutes = (request: IncomingMessage, response: ServerResponse, url: URL) => Promise<boolean>

/** The options of `startInspect()`. */
export interface InspectOptions {
  /** Default 8080; 0 picks a free one. */
  port?: number | undefined
  /** Default 127.0.0.1, this machine only. */
  host?: string | undefined
  /** The collector's path. Default /v3/feedback. */
  collectorPath?: string | undefined
  /** The NDJSON file accepted events go to. */
  dataFile: string
  /** The API keys the collector takes. Default: the demo store's key only. */
  keys?: Iterable<string> | undefined
  /** The inspector's token; a random one by default. */
  inspectorToken?: string | undefined
  /** Largest request body the collector takes, in bytes (the relay's default when left out). */
  maxBodyBytes?: number | undefined
  /** How much an inspector feed may leave unread before it is dropped. Default 1 MiB. */
  maxFeedBytes?: number | undefined
  /** The RegExp of product page URLs for the lints. */
  productUrl?: RegExp | undefined
  /** How long (ms) a client may take to send a request. Default 10,000. */
  requestTimeout?: number | undefined
  /** How long (ms) a client may take to send its headers. Default 5,000. */
  headersTimeout?: number | undefined
  /** Makes the handler of further requests. */
  routes?: ((parts: { collector: Collector; activity: Activity }) => MoreRoutes) | undefined
  /** That `routes` answers the discovery routes and reports their rids to `activity.responded`. */
  seesDiscovery?: boolean | undefined
}

/** A running collector and inspector (`startInspect()`): where they listen, and how to stop them. */
export interface Inspect {
  /** The server's origin, such as http://127.0.0.1:8080. */
  url: string
  /** The inspector's page with its token, to open once. */
  inspectorUrl: string
  /** The inspector's token, in `inspectorUrl` already. */
  inspectorToken: string
  /** The collector, to follow its messages. */
  collector: Collector
  /** What the inspector knows beyond single events. */
  activity: Activity
  /** The Node HTTP server both listen on. */
  server: Server
  /** Closes every connection, then the server and the data file. */
  close(): Promise<void>
}

/** Returns the request target as a URL, or null for one that is not a plain path (`//`, `//%`, `http://…`). */
function target(request: IncomingMessage) {
  try {
    const url = new URL(request.url!, 'http://demo')
    return url.host == 'demo' && request.url!.startsWith('/') ? url : null
  } catch {
    return null
  }
}

const plain = (response: ServerResponse, status: number, text: string, headers = {}) =>
  response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers }).end(text)

/**
 * Whatever one request makes a handler throw, then or later, is answered for that request
 * alone, and the process and every other connection carry on.
 */
function answerFailure(request: IncomingMessage, response: ServerResponse, error: unknown) {
  // The log shows the path only, since the query may carry the inspector's token.
  console.error(`discovery-feedback: ${request.method} ${String(request.url).split('?')[0]} failed:`, error)
  if (response.headersSent || request.socket.destroyed) response.destroy()
  // The request may not have been read to its end, so the connection cannot carry another.
  else plain(response, 500, 'Internal error', { connection: 'close' })
}

/** Listens on `host:port` and resolves with the server's origin. */
function listen(server: Server, port: number, host: string) {
  return new Promise<string>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      // A URL puts an IPv6 host in brackets.
      resolve(`http://${host.includes(':') ? `[${host}]` : host}:${(server.address() as AddressInfo).port}`)
    })
  })
}

/**
 * Starts the collector and the inspector on `host:port` and resolves once it listens. The
 * collector takes the API keys in `keys` and stores to `dataFile`.
 *
 * The inspector needs `inspectorToken`, given once in the URL this resolves with.
 * `requestTimeout` and `headersTimeout` bound how long a client may take to send a request; they
 * never cut a response, so inspector feeds stay open.
 *
 * `routes({ collector, activity })` may return a handler for further requests, resolving false
 * for a request it does not serve; with it, `seesDiscovery` says that it answers the discovery
 * routes and reports their rids to `activity.responded`.
 * @param options - Where to listen, the data file, the keys, the token, and further routes.
 */
export async function startInspect(options: InspectOptions): Promise<Inspect> {
  const { port = 8080, host = '127.0.0.1', collectorPath = '/v3/feedback', requestTimeout = 10000, headersTimeout = 5000 } = options
  const token = options.inspectorToken || newToken()
  const collector = createCollector({ file: options.dataFile, maxBodyBytes: options.maxBodyBytes, keys: options.keys ?? [DEMO_KEY] })
  const activity = createActivity({ collector, seesDiscovery: options.seesDiscovery, productUrl: options.productUrl })
  const inspector = createInspector({ activity, token, maxFeedBytes: options.maxFeedBytes })
  const more: MoreRoutes = options.routes ? options.routes({ collector, activity }) : async () => false

  async function route(request: IncomingMessage, response: ServerResponse) {
    const url = target(request)
    if (!url) return plain(response, 400, 'Bad request target')
    const path = url.pathname
    if (path == collectorPath) return collector.handle(request, response)
    if (path == '/inspector') return inspector.servePage(request, response, url)
    if (path == '/inspector/events') return inspector.streamEvents(request, response, url)
    if (!(await more(request, response, url))) plain(response, 404, 'Not found')
  }

  // Node refuses a headers timeout longer than the request timeout.
  const headersLimit = Math.min(headersTimeout, requestTimeout)
  const server = createServer(
    // Node looks for requests past their timeouts this often (every 30 s by default, longer than ours).
    { requestTimeout, headersTimeout: headersLimit, connectionsCheckingInterval: Math.min(1000, headersLimit / 4) },
    (request, response) => void route(request, response).catch((error) => answerFailure(request, response, error))
  )
  const url = await listen(server, port, host).catch((error) => {
    collector.close()
    throw error
  })
  return {
    url,
    inspectorUrl: `${url}/inspector?token=${encodeURIComponent(token)}`,
    inspectorToken: token,
    collector,
    activity,
    server,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections()
        server.close(() => {
          collector.close()
          done()
        })
      })
  }
}
