// A relay as a Hono route: Bun, Deno and workers serve `app.fetch`; Node through @hono/node-server.
import { Hono } from 'hono'
import { createRelay, forwardSink } from 'discovery-feedback/relay'

const relay = createRelay({
  keys: [process.env.DF_KEY],
  sink: forwardSink({ url: process.env.DF_SERVICE_URL }),
  origins: ['https://www.shop.example'],
  serverSecrets: process.env.DF_SERVER_SECRET ? [process.env.DF_SERVER_SECRET] : []
})

const app = new Hono()
// The peer address: on Node c.env.incoming is the request (@hono/node-server); on Bun or Deno
// take getConnInfo(c).remote.address from hono/bun or hono/deno.
app.all('/df/events', (c) => relay.fetch(c.req.raw, { remoteAddress: c.env?.incoming?.socket.remoteAddress }))
// For Prometheus with its bearer token only; without DF_METRICS_TOKEN, for nobody.
app.get('/metrics', async (c) => {
  const token = process.env.DF_METRICS_TOKEN
  if (!token || c.req.header('authorization') != 'Bearer ' + token) return c.notFound()
  return c.body(await relay.metrics(), 200, { 'content-type': 'text/plain; version=0.0.4' })
})

export default app
