// A relay as a Hono route: Bun, Deno and workers serve `app.fetch`; Node through @hono/node-server.
import { Hono } from 'hono'
import { createRelay, forwardSink } from 'discovery-feedback/relay'

const relay = createRelay({
  keys: [process.env.DF_KEY],
  sink: forwardSink({ url: process.env.DF_SERVICE_URL })
})

const app = new Hono()
// The peer address: on Node c.env.incoming is the request (@hono/node-server); on Bun or Deno
// take getConnInfo(c).remote.address from hono/bun or hono/deno.
app.all('/df/events', (c) => relay.fetch(c.req.raw, { remoteAddress: c.env?.incoming?.socket.remoteAddress }))

export default app
