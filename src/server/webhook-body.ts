/*
 * A webhook's raw body, read whole up to a bound: the signature is over its bytes, and every
 * request to a server of the shop's may be malicious, so an endless body is cut off, not read.
 * Shopify's largest orders (hundreds of lines) are some hundreds of KiB.
 */

/** The largest webhook body taken: 5 MiB. */
export const MAX_WEBHOOK_BYTES = 5 * 1024 * 1024

/** The body's bytes, or undefined when it is larger than `limit`. */
export async function readBody(request: Request, limit = MAX_WEBHOOK_BYTES): Promise<Uint8Array<ArrayBuffer> | undefined> {
  const declared = Number(request.headers.get('content-length'))
  if (declared > limit) return undefined
  if (!request.body) return new Uint8Array(0)
  const chunks: Uint8Array[] = []
  let size = 0
  const reader = request.body.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel()
      return undefined
    }
    chunks.push(value)
  }
  const body = new Uint8Array(size)
  let at = 0
  for (const chunk of chunks) {
    body.set(chunk, at)
    at += chunk.byteLength
  }
  return body
}
