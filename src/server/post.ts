/** A collector's answer to one batch: its status (0 when none came in time) and its Retry-After. */
export interface BatchAnswer {
  status: number
  retryAfter: string | null
}

/**
 * POSTs one batch to the collector and resolves its answer; no answer within `timeout` ms
 * counts as none. The answer's body is read to the end, so that the connection can be reused.
 * `controller` lets close() give the request up.
 */
export async function postBatch(url: string, body: string, timeout: number, controller: AbortController): Promise<BatchAnswer> {
  const timer = setTimeout(() => controller.abort(), timeout)
  try {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal: controller.signal })
    await response.arrayBuffer().catch(() => {})
    return { status: response.status, retryAfter: response.headers.get('retry-after') }
  } catch {
    // No answer, or none in time: a failure like a 503.
    return { status: 0, retryAfter: null }
  } finally {
    clearTimeout(timer)
  }
}
