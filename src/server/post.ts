/** A collector's answer to one batch: its status (0 when none came in time) and its Retry-After. */
export interface BatchAnswer {
  status: number
  retryAfter: string | null
}

/**
 * POSTs one batch to the collector and resolves its answer; no answer within `timeout` ms
 * counts as none. The answer's body is read to the end, so that the connection can be reused.
 * `controller` lets close() give the request up; `secret` proves the sender is the shop's server.
 */
export async function postBatch(url: string, body: string, timeout: number, controller: AbortController, secret?: string): Promise<BatchAnswer> {
  const timer = setTimeout(() => controller.abort(), timeout)
  // The relay believes the shopper's ip and ua from a server sender only (its serverSecrets).
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(secret ? { authorization: 'Bearer ' + secret } : {}) }
  try {
    const response = await fetch(url, { method: 'POST', headers, body, signal: controller.signal })
    await response.arrayBuffer().catch(() => {})
    return { status: response.status, retryAfter: response.headers.get('retry-after') }
  } catch {
    // No answer, or none in time: a failure like a 503.
    return { status: 0, retryAfter: null }
  } finally {
    clearTimeout(timer)
  }
}
