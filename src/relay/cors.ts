import type { RelayOptions } from './types'

/** CORS headers for a request's Origin: its own origin needs none; others only if listed. */
export function corsHeaders(request: Request, origins: RelayOptions['origins']): Record<string, string> {
  // '*' is the same answer for everyone, so it goes on every response, as the collector
  // protocol asks (docs/reference/collector-protocol.md, CORS).
  if (origins == '*') return { 'access-control-allow-origin': '*', 'access-control-expose-headers': 'Retry-After' }
  const origin = request.headers.get('origin')
  if (!origin || !origins) return {}
  return origins.includes(origin) ? { 'access-control-allow-origin': origin, 'access-control-expose-headers': 'Retry-After', vary: 'Origin' } : {}
}

/** The answer to a preflight: the methods the relay takes and the headers the page asked for, for a day. */
export function preflight(request: Request, headers: Record<string, string>): Response {
  return new Response(null, {
    status: 204,
    headers: {
      ...headers,
      'access-control-allow-methods': 'POST, OPTIONS',
      'access-control-allow-headers': request.headers.get('access-control-request-headers') || 'content-type',
      'access-control-max-age': '86400'
    }
  })
}
