// A relay inside an Express 5 shop, on its own origin, behind one proxy (a load balancer).
import express from 'express'
import { createRelay, forwardSink, toNodeHandler } from 'discovery-feedback/relay'

const relay = createRelay({
  keys: [process.env.DF_KEY],
  sink: forwardSink({ url: process.env.DF_SERVICE_URL }),
  // The relay reads the socket itself: Express's app.set('trust proxy') does not reach it.
  trustProxy: 1
})

const app = express()
// Before any body parser, which would read the body first.
app.post('/df/events', toNodeHandler(relay))
app.use(express.json())
app.get('/', (request, response) => response.send('shop'))

app.listen(process.env.PORT || 3000)
