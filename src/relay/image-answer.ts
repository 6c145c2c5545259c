// A transparent 1×1 GIF: the answer an image request of the service's feedback library loads.
const PIXEL = Uint8Array.from(atob('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7'), (char) => char.charCodeAt(0))

/** An image request's answer: the pixel for what was taken, the JSON error (which the image ignores, a reader of the logs does not) for the rest. */
export function asImage(answer: Response): Response {
  if (answer.status != 200) return answer
  const headers = new Headers(answer.headers)
  headers.set('content-type', 'image/gif')
  headers.set('cache-control', 'no-store')
  return new Response(PIXEL, { status: 200, headers })
}
