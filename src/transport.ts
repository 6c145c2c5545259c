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

/** The collector's answer: HTTP status (0 when there was none), Retry-After, and its `missing` list when asked for and given. */
export type Answer = [status: number, retryAfter?: string | null, missing?: unknown]

/**
 * POSTs a body and resolves the collector's answer, or status 0 when there was none (offline,
 * refused, CORS not allowed). CORS mode so the answer can be read: with a text/plain body it
 * is still a simple request without preflight. keepalive lets it finish after the page
 * leaves; it shares sendBeacon's 64 KiB budget. `read`: the body is wanted too.
 */
export function post(url: string, body: string, keepalive: boolean, read: boolean): Promise<Answer> {
  const none: Answer = [0]
  try {
    return fetch(url, {
      method: 'POST',
      body,
      headers: { 'content-type': TEXT },
      mode: 'cors',
      credentials: 'omit',
      keepalive
    }).then(
      (response) => {
        const answer: Answer = [response.status, response.headers.get('retry-after')]
        return read
          ? response.json().then(
              (json): Answer => [answer[0], answer[1], json && json.missing],
              () => answer
            )
          : answer
      },
      () => none
    )
  } catch {
    return Promise.resolve(none)
  }
}
