import { encode } from './json'
import type { Envelope } from './types'
import { utf8 } from './utf8'

/** A queued event and, once made, its wire text. */
export interface Packed<Event = Envelope> {
  event: Event
  wire?: string
}

/** An entry's JSON text, made once: for its size when tracked, for storage and for every request. */
export function jsonOf(entry: Packed<unknown>): string {
  return (entry.wire ??= encode(entry.event))
}

/**
 * UTF-8 size of a string: the bytes it takes as a request body, which fetch and sendBeacon
 * encode as UTF-8 the way TextEncoder does (Fetch standard, "extract a body").
 */
export const byteLength = (text: string) => utf8.encode(text).length

/**
 * The largest body any sender makes: 60 KiB, which leaves room for request overhead within the
 * browser's 64 KiB budget of keepalive requests (shared/keepalive.ts). The server sender and the
 * relay keep to it too, so that a collector sees the same bodies from every sender.
 */
export const MAX_BODY = 61440

/** A request body: the JSON array text, the entries it carries and its UTF-8 size. */
export interface Body<Entry extends Packed<unknown>> {
  body: string
  entries: Entry[]
  bytes: number
}

/**
 * Packs entries, in order, into JSON-array bodies of at most `maxBytes` each, so that no
 * request reaches the browser's 64 KiB keepalive limit (Fetch standard, "keepalive").
 * An event too large for any body on its own is handed to `onTooLarge` instead. Stops after
 * `maxBodies` bodies: what is left waits.
 */
export function pack<Entry extends Packed<unknown>>(
  entries: Entry[],
  maxBytes: number,
  onTooLarge: (entry: Entry) => void,
  maxBodies = Infinity
): Body<Entry>[] {
  const bodies: Body<Entry>[] = []
  let members: Entry[] = []
  let size = 1 // the closing bracket
  const close = () => bodies.push({ body: '[' + members.map(jsonOf).join() + ']', entries: members, bytes: size })
  for (const entry of entries) {
    const bytes = byteLength(jsonOf(entry)) + 1 // with the bracket or comma before it
    if (bytes + 1 > maxBytes) {
      onTooLarge(entry)
      continue
    }
    if (size + bytes > maxBytes) {
      close()
      if (bodies.length >= maxBodies) return bodies
      size = 1
      members = []
    }
    size += bytes
    members.push(entry)
  }
  if (members.length) close()
  return bodies
}
