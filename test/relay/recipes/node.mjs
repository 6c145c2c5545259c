// A relay on Node's own HTTP server, in front of the service.
import { createServer } from 'node:http'
import { createRelay, forwardSink, toNodeHandler } from 'discovery-feedback/relay'

const relay = createRelay({
  keys: [process.env.DF_KEY],
  sink: forwardSink({ url: process.env.DF_SERVICE_URL })
})

createServer(toNodeHandler(relay)).listen(process.env.PORT || 8080)
