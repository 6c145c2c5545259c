// A CORS-safelisted type: a cross-origin collector receives the body without a preflight.
const TEXT = 'text/plain;charset=UTF-8'

/**
 * Hands a body to the browser to send even after the page is gone. False when it is missing
 * (some in-app browsers) or refused: Chromium refuses once the page has 64 KiB of keepalive
 * requests in flight. True means queued by the browser, not delivered.
 */
export function beacon(url: string, body: string): boolean {
  try {
    return navigator.sendBeacon(url, body)
  } catch {
    return false
  }
}

/** The collector's answer: HTTP status (0 when there was none), Retry-After, and its `missing` list if it gave one. */
export type Answer = [status: number, retryAfter?: string | null, missing?: unknown]

/**
 * POSTs a body and resolves the collector's answer, or status 0 when there was none (offline,
 * refused, CORS not allowed). CORS mode so the answer can be read: with a text/plain body it
 * is still a simple request without preflight. keepalive lets it finish after the page
 * leaves; it shares sendBeacon's 64 KiB budget.
 */
export function post(url: string, body: string, keepalive: boolean): Promise<Answer> {
  try {
    return fetch(url, {
      method: 'POST',
      body,
      headers: { 'content-type': TEXT },
      mode: 'cors',
      credentials: 'omit',
      keepalive
    }).then(
      (response) =>
        response
          .json()
          .then(
            (json) => json && json.missing,
            () => {}
          )
          .then((missing): Answer => [response.status, response.headers.get('retry-after'), missing]),
      (): Answer => [0]
    )
  } catch {
    return Promise.resolve([0])
  }
}
