// A CORS-safelisted type: a cross-origin collector receives the body without a preflight.
const TEXT = 'text/plain;charset=UTF-8'

/**
 * Hands one body to the browser; resolves whether it was taken.
 *
 * sendBeacon comes first because it outlives the page. Chromium refuses it (returns false)
 * once the page has 64 KiB of keepalive requests in flight, and keepalive fetch shares that
 * budget, so a refused beacon on a visible page goes out as an ordinary fetch, which has no
 * budget and has time to finish. Only a hidden page needs fetch's keepalive.
 */
export function send(url: string, body: string): Promise<boolean> {
  try {
    if (navigator.sendBeacon(url, body)) return Promise.resolve(true)
  } catch {
    // Missing (older in-app browsers) or refused outright: fall through to fetch.
  }
  return fetch(url, {
    method: 'POST',
    body,
    headers: { 'content-type': TEXT },
    mode: 'no-cors',
    credentials: 'omit',
    keepalive: document.visibilityState == 'hidden'
  }).then(
    () => true,
    () => false
  )
}
