/**
 * POSTs one batch to the collector and resolves its status (0 when no answer came, or none
 * within `timeout` ms) and its Retry-After. The answer's body is read to the end, so that the
 * connection can be reused. `controller` lets close() give the request up.
 */
export async function postBatch(url: string, body: string, timeout: number, controller: AbortController): Promise<[status: number, retryAfter: string | null]> {
  const timer = setTimeout(() => controller.abort(), timeout)
  try {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal: controller.signal })
    await response.arrayBuffer().catch(() => {})
    return [response.status, response.headers.get('retry-after')]
  } catch {
    // No answer, or none in time: a failure like a 503.
    return [0, null]
  } finally {
    clearTimeout(timer)
  }
}
