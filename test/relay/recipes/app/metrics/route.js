// app/metrics/route.js: the relay's metrics, for Prometheus with its bearer token only.
/* global process, Response -- (for this repository's ESLint, which gives Node globals to .ts and .mjs files only; not part of the recipe) */
import { relay } from '../df/relay.js'

export async function GET(request) {
  const token = process.env.DF_METRICS_TOKEN
  // Without DF_METRICS_TOKEN, for nobody.
  if (!token || request.headers.get('authorization') != 'Bearer ' + token) return new Response(null, { status: 404 })
  return new Response(await relay.metrics(), { headers: { 'content-type': 'text/plain; version=0.0.4' } })
}
