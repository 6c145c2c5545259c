import { errorMessageOf } from '../shared/http'
import { SERVER_AGENT } from '../shared/server-agent'

/** A collector's answer to one batch: its status (0 when none came in time), its Retry-After, and the error it gave. */
export interface BatchAnswer {
  status: number
  retryAfter: string | null
  /** The collector's own words for a refusal (`{ error: { message } }`), so that a dropped event says why. */
  message?: string
}

// An error message longer than this is cut: it goes into a log line.
const MAX_MESSAGE = 300

/**
 * POSTs one batch to the collector and resolves its answer; no answer within `timeout` ms
 * counts as none.
 * `controller` lets close() give the request up; `secret` proves the sender is the shop's server.
 */
export async function postBatch(url: string, body: string, timeout: number, controller: AbortController, secret?: string): Promise<BatchAnswer> {
  const timer = setTimeout(() => controller.abort(), timeout)
  // The relay believes the shopper's ip and ua from a server sender only (its serverSecrets), and
  // tells one without a secret by its agent, to answer it so.
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': SERVER_AGENT,
    ...(secret ? { authorization: 'Bearer ' + secret } : {})
  }
  try {
    const response = await fetch(url, { method: 'POST', headers, body, signal: controller.signal })
    // Read to the end, so that the connection can be reused; a refusal's words are kept.
    const text = await response.text().catch(() => '')
    const answer: BatchAnswer = { status: response.status, retryAfter: response.headers.get('retry-after') }
    if (response.status >= 400) answer.message = errorMessageOf(text)?.slice(0, MAX_MESSAGE)
    return answer
  } catch {
    // No answer, or none in time: a failure like a 503.
    return { status: 0, retryAfter: null }
  } finally {
    clearTimeout(timer)
  }
}
