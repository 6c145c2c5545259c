// app/df/events/route.js: the relay as a Next.js App Router route handler.
/* global process -- (for this repository's ESLint, which gives Node globals to .ts and .mjs files only; not part of the recipe) */
import { createRelay, forwardSink } from 'discovery-feedback/relay'

const relay = createRelay({
  keys: [process.env.DF_KEY],
  sink: forwardSink({ url: process.env.DF_SERVICE_URL }),
  // Vercel sets the shopper's address in x-real-ip; behind your own proxies use trustProxy.
  ipHeader: 'x-real-ip'
})

export const POST = (request) => relay.fetch(request)
export const OPTIONS = (request) => relay.fetch(request)
// The service's own feedback library sends by image where a browser has no sendBeacon.
export const GET = (request) => relay.fetch(request)
