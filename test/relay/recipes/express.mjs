// A relay inside an Express 5 shop, on its own origin, behind one proxy (a load balancer).
import express from 'express'
import { createRelay, forwardSink, toNodeHandler } from 'discovery-feedback/relay'

const relay = createRelay({
  keys: [process.env.DF_KEY],
  sink: forwardSink({ url: process.env.DF_SERVICE_URL }),
  // The relay reads the socket itself: Express's app.set('trust proxy') does not reach it.
  trustProxy: 1,
  origins: ['https://www.shop.example'],
  serverSecrets: process.env.DF_SERVER_SECRET ? [process.env.DF_SERVER_SECRET] : []
})

const app = express()
// Before any body parser, which would read the body first.
app.post('/df/events', toNodeHandler(relay))
// For Prometheus with its bearer token only; without DF_METRICS_TOKEN, for nobody.
app.get('/metrics', async (request, response) => {
  const token = process.env.DF_METRICS_TOKEN
  if (!token || request.get('authorization') != 'Bearer ' + token) return response.sendStatus(404)
  response.set('content-type', 'text/plain; version=0.0.4').send(await relay.metrics())
})
app.use(express.json())
app.get('/', (request, response) => response.send('shop'))

const port = process.env.PORT || 3000
app.listen(port, () => console.log(`Shop listening on http://localhost:${port}/, its relay at /df/events (the pages' data-endpoint)`))
