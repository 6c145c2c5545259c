// This module reads request bodies for the demo's own routes that take one: the discovery routes
// (demo/discovery.mjs) and the store's checkout (demo/store.mjs). The collector's are read by
// the relay (src/relay/).

/**
 * Reads the body of `request` and resolves with it: a Buffer, or with `text` a string decoded
 * from UTF-8, whose length `limit` then counts in characters instead of bytes.
 *
 * A body longer than `limit` resolves null as soon as the reader knows it: from a Content-Length
 * that declares more bytes (a byte limit only, since a declared length counts bytes), or once more
 * has arrived. The reader then stops listening for data and leaves the request paused with the rest
 * of its body unread, so that the caller decides what happens to it: a caller that answers at
 * once calls `request.resume()`, which reads the rest and drops it.
 *
 * The promise rejects when the request fails, or when it closes before its body ended (the
 * server's request timeout can close it that way).
 */
export function readBody(request, limit, { text = false } = {}) {
  return new Promise((resolve, reject) => {
    if (!text && Number(request.headers['content-length']) > limit) {
      resolve(null)
      return
    }
    if (text) request.setEncoding('utf8')
    const chunks = []
    let size = 0
    const onData = (chunk) => {
      size += chunk.length
      if (size > limit) {
        request.off('data', onData)
        request.pause()
        resolve(null)
      } else chunks.push(chunk)
    }
    request.on('data', onData)
    request.on('end', () => resolve(text ? chunks.join('') : Buffer.concat(chunks)))
    request.on('error', reject)
    request.on('close', () => reject(new Error('the request closed before its body ended')))
  })
}
