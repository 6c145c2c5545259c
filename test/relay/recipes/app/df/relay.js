// app/df/relay.js: the shop's relay, one per server process, shared by its two routes.
/* global process -- (for this repository's ESLint, which gives Node globals to .ts and .mjs files only; not part of the recipe) */
import { createRelay, forwardSink } from 'discovery-feedback/relay'

export const relay = createRelay({
  keys: [process.env.DF_KEY],
  sink: forwardSink({ url: process.env.DF_SERVICE_URL }),
  // Vercel sets the shopper's address in x-real-ip; behind your own proxies use trustProxy.
  ipHeader: 'x-real-ip',
  origins: ['https://www.shop.example'],
  serverSecrets: process.env.DF_SERVER_SECRET ? [process.env.DF_SERVER_SECRET] : []
})
