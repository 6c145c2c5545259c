// A local stand-in of SPEC's service as its event route would take events: one envelope per
// request, POST, a JSON object holding SPEC's "Generic event structure" and nothing else, the key
// in the body (SPEC "Authentication" 4) and again beside it. Anything else is answered 400 with
// SPEC's error shape, so a sender that batches, adds fields or leaves the key out is caught.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { validate } from '../../src/shared/rules'

const SPEC_FIELDS = ['event', 'key', 'properties', 't_client', 'user']
const USER_FIELDS = ['uid', 'sid', 'email', 'ip', 'ua', 'lang']

export interface StandInOptions {
  /** The keys it takes. */
  keys: string[]
  /**
   * What a request must carry besides the body's key. `'header'` (a server's request, SPEC
   * "General rules" 2 and "Authentication" 2): `Content-Type: application/json` and `X-Key`.
   * `'header-or-query'` also takes what the service's own feedback library sends from a page:
   * `?key=` in the URL and a `text/plain` body (a beacon, which can set no header).
   */
  accept?: 'header' | 'header-or-query'
  /** CORS for pages on other origins (the tracker's straight-to-service option). */
  cors?: boolean
  /** Milliseconds it takes to answer each request, as a busy service would; requests in flight at once each take as long. Default 0. */
  answerAfterMs?: number
}

export interface StoredEvent {
  event: string
  properties: Record<string, unknown>
  key: string
  t_client: number
  user: Record<string, unknown>
}

/** Why a request is refused, or '' when it is a SPEC event. */
function faultOf(request: IncomingMessage, url: URL, text: string, keys: Set<string>, accept: StandInOptions['accept']): string {
  if (request.method != 'POST') return 'use POST'
  const type = String(request.headers['content-type'] || '')
  const headerKey = request.headers['x-key']
  const queryKey = url.searchParams.get('key')
  const fromPage = accept == 'header-or-query' && queryKey != null && type.startsWith('text/plain')
  if (!fromPage && !type.startsWith('application/json')) return 'Content-Type must be application/json'
  if (!fromPage && typeof headerKey != 'string') return 'An API key must be provided.'
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return 'body is not JSON'
  }
  if (!body || typeof body != 'object' || Array.isArray(body)) return 'the body must be one event object'
  const given = body as Record<string, unknown>
  const extra = Object.keys(given).filter((field) => !SPEC_FIELDS.includes(field))
  if (extra.length) return 'unknown fields: ' + extra.join(', ')
  if (typeof given.key != 'string' || !keys.has(given.key)) return 'The API key is not valid.'
  if ((fromPage ? queryKey : headerKey) != given.key) return 'the key beside the body differs from the body key'
  if (!Number.isFinite(given.t_client)) return 't_client must be a number'
  const user = given.user as Record<string, unknown>
  if (!user || typeof user != 'object' || typeof user.uid != 'string' || typeof user.sid != 'string') return 'user.uid and user.sid are required'
  const extraUser = Object.keys(user).filter((field) => !USER_FIELDS.includes(field))
  if (extraUser.length) return 'unknown user fields: ' + extraUser.join(', ')
  try {
    const properties = validate(given.event, given.properties)
    if (Object.keys(given.properties as object).length != Object.keys(properties).length) return 'unknown properties'
  } catch (error) {
    return (error as Error).message
  }
  return ''
}

/**
 * Starts the stand-in on a free loopback port. `events` holds what it stored, in order;
 * `refused` what it answered 400 and why; `down(true)` makes it answer 503 to everything until
 * `down(false)`.
 */
export async function startServiceStandIn({ keys, accept = 'header', cors = false, answerAfterMs = 0 }: StandInOptions) {
  const taken = new Set(keys)
  const events: StoredEvent[] = []
  const refused: { error: string; body: string }[] = []
  let isDown = false
  let requests = 0
  const corsHeaders: Record<string, string> = cors ? { 'access-control-allow-origin': '*' } : {}
  const answerNow = (response: ServerResponse, status: number, body: unknown) =>
    response.writeHead(status, { 'content-type': 'application/json', ...corsHeaders }).end(JSON.stringify(body))
  const answer = (response: ServerResponse, status: number, body: unknown) =>
    answerAfterMs ? setTimeout(() => answerNow(response, status, body), answerAfterMs) : answerNow(response, status, body)

  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      requests++
      if (cors && request.method == 'OPTIONS') {
        response
          .writeHead(204, {
            ...corsHeaders,
            'access-control-allow-methods': 'POST, OPTIONS',
            'access-control-allow-headers': String(request.headers['access-control-request-headers'] || 'content-type')
          })
          .end()
        return
      }
      if (isDown) return answer(response, 503, { error: { message: 'the service is down' } })
      const url = new URL(request.url || '/', 'http://stand-in')
      const text = Buffer.concat(chunks).toString('utf8')
      const error = faultOf(request, url, text, taken, accept)
      if (error) {
        refused.push({ error, body: text })
        return answer(response, 400, { error: { message: error } })
      }
      events.push(JSON.parse(text))
      answer(response, 200, {})
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/v3/feedback`,
    events,
    refused,
    /** Requests answered, preflights included. */
    requests: () => requests,
    down(value: boolean) {
      isDown = value
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
