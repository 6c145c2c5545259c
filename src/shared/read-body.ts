/**
 * The body as bytes, or why it was not read: longer than `limit` bytes (read as it arrives,
 * never buffered whole beyond it), or not whole within `timeoutMs`, when the rest of it is
 * given up (a sender that trickles its body would hold the server's memory for as long as it likes).
 * The relay reads its batches with it, and the order webhooks their orders.
 */
export async function readBodyWithin(request: Request, limit: number, timeoutMs: number): Promise<Uint8Array<ArrayBuffer> | 'too large' | 'too slow'> {
  if (Number(request.headers.get('content-length')) > limit) return 'too large'
  if (!request.body) return new Uint8Array(0)
  const reader = request.body.getReader()
  let late = false
  const timer = setTimeout(() => {
    late = true
    // The read in progress ends at once, as if the body had.
    reader.cancel().catch(() => {})
  }, timeoutMs)
  const chunks: Uint8Array[] = []
  let size = 0
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (late) return 'too slow'
      if (done) break
      size += value.length
      if (size > limit) {
        reader.cancel().catch(() => {})
        return 'too large'
      }
      chunks.push(value)
    }
  } finally {
    clearTimeout(timer)
  }
  const bytes = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.length
  }
  return bytes
}
