import type { Relay } from './types'

// Node's http types, as much of them as the adapter uses: the package needs no @types/node.
// Optional fields admit undefined, as Node's own declarations have them, so that a handler
// called with an IncomingMessage compiles under exactOptionalPropertyTypes.
interface NodeRequest {
  method?: string | undefined
  url?: string | undefined
  headers: Record<string, string | string[] | undefined>
  socket: { remoteAddress?: string | undefined; encrypted?: boolean | undefined }
  /** Whether the whole request, its body included, has arrived. */
  complete?: boolean | undefined
  on(event: 'data', listener: (chunk: Uint8Array) => void): unknown
  on(event: 'end' | 'close', listener: () => void): unknown
  on(event: 'error', listener: (error: Error) => void): unknown
  off(event: 'data', listener: (chunk: Uint8Array) => void): unknown
  pause(): unknown
  resume(): unknown
}
interface NodeResponse {
  headersSent: boolean
  writableEnded: boolean
  writeHead(status: number, headers: Record<string, string | string[]>): unknown
  write(body: string): unknown
  end(body?: string): unknown
  destroy(): unknown
}

// The rest of a refused upload may keep arriving for this long after the answer went out.
const LINGER_MS = 5000

/**
 * The request's body as a stream, read only as fast as the relay reads it: the request stays
 * paused until the stream is pulled, so a body the relay refuses unread (a Content-Length over
 * the limit) is never held in memory. `stop` lets go of it, for the rest to be read away.
 */
function bodyOf(request: NodeRequest) {
  let stopped = false
  let controller: ReadableStreamDefaultController<Uint8Array>
  const onData = (chunk: Uint8Array) => {
    controller.enqueue(new Uint8Array(chunk))
    if ((controller.desiredSize ?? 0) <= 0) request.pause()
  }
  const stop = () => {
    stopped = true
    request.off('data', onData)
  }
  const stream = new ReadableStream<Uint8Array>({
    start(control) {
      controller = control
      request.on('data', onData)
      request.pause()
      request.on('end', () => {
        if (!stopped) controller.close()
      })
      request.on('error', (error) => {
        if (!stopped) controller.error(error)
      })
    },
    pull() {
      request.resume()
    },
    cancel() {
      // The relay read enough (a body over the limit): the rest stays unread until answered.
      stop()
      request.pause()
    }
  })
  return { stream, stop }
}

/**
 * The relay as a Node `http` handler, `(request, response) => …`, for `http.createServer` and
 * Express (mount it before any body parser, which would read the body first). The connection's
 * peer address goes to the relay, whose `trustProxy` decides whether it is the shopper.
 * @param relay - The relay, from `createRelay()`.
 */
export function toNodeHandler(relay: Pick<Relay, 'fetch'>) {
  return async (request: NodeRequest, response: NodeResponse) => {
    try {
      const headers = new Headers()
      for (const [name, value] of Object.entries(request.headers)) {
        if (value != null) headers.set(name, Array.isArray(value) ? value.join(', ') : value)
      }
      // A Host header that is no host (a shopper can send anything) gives way to a placeholder:
      // the relay reads only the path, the query and the scheme of the URL.
      let url: URL
      try {
        url = new URL(request.url || '/', (request.socket.encrypted ? 'https://' : 'http://') + (headers.get('host') || 'localhost'))
      } catch {
        url = new URL(request.url || '/', 'http://localhost')
      }
      const method = request.method || 'GET'
      const body = method != 'GET' && method != 'HEAD' ? bodyOf(request) : undefined
      const init = { method, headers, body: body?.stream, duplex: 'half' } as RequestInit
      const answer = await relay.fetch(new Request(url, init), { remoteAddress: request.socket.remoteAddress })
      const out: Record<string, string | string[]> = {}
      answer.headers.forEach((value, name) => {
        if (name != 'set-cookie') out[name] = value
      })
      const cookies = answer.headers.getSetCookie()
      if (cookies.length) out['set-cookie'] = cookies
      const text = await answer.text()
      if (request.complete !== false) {
        response.writeHead(answer.status, out)
        response.end(text)
        return
      }
      // An answer given before the body arrived whole (413 over the limit, 429 over the rate
      // limit, 408 too slow): closing on unread data would make TCP reset the connection and the
      // client lose the answer. So the answer goes out whole, the rest of the body is read and
      // thrown away, and the connection closes once that ends, or after LINGER_MS, as HTTP
      // servers linger before a close: a sender that never finishes holds it no longer.
      response.writeHead(answer.status, { ...out, 'content-length': String(new TextEncoder().encode(text).length), connection: 'close' })
      response.write(text)
      const close = () => {
        clearTimeout(linger)
        if (!response.writableEnded) response.end()
      }
      const linger = setTimeout(close, LINGER_MS)
      request.on('end', close)
      request.on('close', close)
      // Read away, not kept: the stream lets go of the request first.
      body?.stop()
      request.resume()
    } catch {
      // The request failed on its way in (the client went): nothing is left to answer.
      if (!response.headersSent) {
        response.writeHead(400, { 'content-type': 'application/json' })
        response.end('{"error":{"message":"the request could not be read"}}')
      } else response.destroy()
    }
  }
}
