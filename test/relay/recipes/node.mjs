// A relay on Node's own HTTP server, in front of the service.
import { createServer } from 'node:http'
import { createRelay, forwardSink, toNodeHandler } from 'discovery-feedback/relay'

const relay = createRelay({
  keys: [process.env.DF_KEY],
  sink: forwardSink({ url: process.env.DF_SERVICE_URL })
})

createServer(toNodeHandler(relay)).listen(process.env.PORT || 8080)

// The metrics on a port of their own, on the loopback unless METRICS_HOST names an inside
// address: for Prometheus on your network, never for the shop's visitors.
createServer(async (request, response) => {
  response.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(await relay.metrics())
}).listen(process.env.METRICS_PORT || 9464, process.env.METRICS_HOST || '127.0.0.1')
