import type { Envelope } from './types'

/**
 * UTF-8 size of a string without copying it, as a TextEncoder would. A lone surrogate half
 * counts 3 bytes, so a pair counts 6 where 4 go on the wire: the estimate errs on the safe side.
 */
export function byteLength(text: string): number {
  let bytes = text.length
  for (let i = text.length; i--; ) {
    const code = text.charCodeAt(i)
    if (code > 0x7f) bytes += code > 0x7ff ? 2 : 1
  }
  return bytes
}

/**
 * Packs events, in order, into JSON-array bodies of at most `maxBytes` each, so that no
 * request reaches the browser's 64 KiB keepalive limit (Fetch standard, "keepalive").
 * An event too large for any body on its own is handed to `tooLarge` instead.
 */
export function pack(events: Envelope[], maxBytes: number, tooLarge: (event: Envelope) => void): [body: string, events: Envelope[]][] {
  const bodies: [string, Envelope[]][] = []
  let body = ''
  let size = 1 // the closing bracket
  let members: Envelope[] = []
  for (const event of events) {
    const json = JSON.stringify(event)
    const bytes = byteLength(json) + 1 // with the bracket or comma before it
    if (bytes + 1 > maxBytes) {
      tooLarge(event)
      continue
    }
    if (size + bytes > maxBytes) {
      bodies.push([body + ']', members])
      body = ''
      size = 1
      members = []
    }
    body += (body ? ',' : '[') + json
    size += bytes
    members.push(event)
  }
  if (body) bodies.push([body + ']', members])
  return bodies
}
