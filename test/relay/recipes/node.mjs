// A relay on Node's own HTTP server, in front of the service.
import { createServer } from 'node:http'
import { createRelay, forwardSink, toNodeHandler } from 'discovery-feedback/relay'

const relay = createRelay({
  keys: [process.env.DF_KEY],
  sink: forwardSink({ url: process.env.DF_SERVICE_URL }),
  // The shop's other hosts whose pages post here across origins; none where the pages share the relay's origin.
  origins: ['https://www.shop.example'],
  // The secret of the shop's server sender (createServerTracker({ secret })): without one, its
  // requests are answered 401 and it counts its events as dropped.rejected, never as sent.
  serverSecrets: process.env.DF_SERVER_SECRET ? [process.env.DF_SERVER_SECRET] : []
})

// Node's own timeouts cut a client that trickles its headers (10 s) or its whole request (15 s;
// the relay itself gives a body 10 s), looked for every second rather than Node's 30.
const timeouts = { headersTimeout: 10000, requestTimeout: 15000, connectionsCheckingInterval: 1000 }
const port = process.env.PORT || 3000
createServer(timeouts, toNodeHandler(relay)).listen(port, process.env.HOST, () => {
  console.log(`Relay listening on http://${process.env.HOST || 'localhost'}:${port}/ (the pages' data-endpoint)`)
})

// The metrics on a port of their own, on the loopback unless METRICS_HOST names an inside
// address: for Prometheus on your network, never for the shop's visitors.
createServer(async (request, response) => {
  response.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(await relay.metrics())
}).listen(process.env.METRICS_PORT || 9464, process.env.METRICS_HOST || '127.0.0.1', () => {
  console.log(`Metrics on http://${process.env.METRICS_HOST || '127.0.0.1'}:${process.env.METRICS_PORT || 9464}/ (for Prometheus)`)
})
