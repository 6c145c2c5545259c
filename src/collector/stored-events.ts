// This module reads back the collector's NDJSON file at start, so that the event ids already
// stored are known again after a restart.
import { closeSync, openSync, readSync } from 'node:fs'
import { StringDecoder } from 'node:string_decoder'
import type { RelayEvent } from '../relay'

// The file is read a megabyte at a time, since it may outgrow what one string can hold.
const CHUNK = 1 << 20

/** Returns the event on one line of the file, or null for a line that holds none. */
function eventOf(line: string | undefined): RelayEvent | null {
  try {
    const event = line && JSON.parse(line)
    return event && event.event_id && event.user ? event : null
  } catch {
    // A crash mid-write can leave a line cut short; its event was never acknowledged, so it is
    // skipped.
    return null
  }
}

const events = (lines: (string | undefined)[]) => lines.map(eventOf).filter((event): event is RelayEvent => event != null)

/**
 * Calls `found(events)` with the events of the NDJSON `file` that have an event id, a chunk's
 * worth at a time, and returns whether its last line was cut short.
 */
export function readStored(file: string, found: (events: RelayEvent[]) => unknown): boolean {
  let rest = ''
  const input = openSync(file, 'r')
  const chunk = Buffer.alloc(CHUNK)
  // A character cut by the chunk's end is completed by the next chunk.
  const text = new StringDecoder('utf8')
  let bytes = readSync(input, chunk, 0, CHUNK, null)
  while (bytes > 0) {
    const lines = (rest + text.write(chunk.subarray(0, bytes))).split('\n')
    rest = lines.pop() ?? ''
    found(events(lines))
    bytes = readSync(input, chunk, 0, CHUNK, null)
  }
  closeSync(input)
  found(events([rest]))
  return rest != ''
}
