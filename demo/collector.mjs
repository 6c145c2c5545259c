// This is the reference collector: the first-party relay (src/relay/, README "First-party
// relay") with a file sink and a memory store, so that the collector the demo and
// `npx discovery-feedback inspect` run and the relay a shop deploys are one code path. The relay
// speaks README "Collector protocol"; what this file adds is the demo's own: the NDJSON file,
// the event ids read back from it at start, and the messages the inspector shows.
import { closeSync, existsSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs'
import { dirname } from 'node:path'
import { StringDecoder } from 'node:string_decoder'
import { createRelay, memoryStore, toNodeHandler } from '../dist/relay.mjs'
import { DEMO_KEY, KEY_MISSING } from './access.mjs'

export { KEY_MISSING }

const RECENT = 100
// The collector reads its file a megabyte at a time, since the file may outgrow what one string
// can hold.
const CHUNK = 1 << 20

const isString = (value) => typeof value == 'string'
const clip = (text, length) => (text.length > length ? text.slice(0, length) + '…' : text)
// `shown` is what the inspector may show of a value in a rejected envelope: a primitive as it is
// (a string cut short), and of anything else only its kind, since only what the rules accepted
// is safe to walk.
const shown = (value) =>
  isString(value) ? clip(value, 200) : value === null || typeof value != 'object' ? value : Array.isArray(value) ? '(array)' : '(object)'
// fromEntries defines own properties, so a field named __proto__ stays a field.
const shallow = (object) =>
  Object.fromEntries(
    Object.keys(object)
      .slice(0, 20)
      .map((field) => [clip(field, 64), shown(object[field])])
  )

/** Returns what the inspector gets of a rejected envelope: a few fields, bounded in size whatever was sent. */
function summary(envelope) {
  if (!envelope || typeof envelope != 'object' || Array.isArray(envelope)) return shown(envelope)
  const { properties, user } = envelope
  return {
    event: shown(envelope.event),
    has_key: isString(envelope.key) && envelope.key != '',
    t_client: shown(envelope.t_client),
    event_id: shown(envelope.event_id),
    user: user && typeof user == 'object' ? { uid: shown(user.uid), sid: shown(user.sid) } : shown(user),
    properties: properties && typeof properties == 'object' && !Array.isArray(properties) ? shallow(properties) : shown(properties)
  }
}

/**
 * Returns the inspector's messages of one batch the relay reports (its `onBatch`): accepted
 * events as stored, with the send time the client gave for the clock-skew lint (demo/lints.mjs);
 * duplicates as they came; rejected envelopes as a bounded summary with the error clipped. The
 * report gives an index for rejected envelopes only, so a batch's messages come accepted first,
 * then duplicates, then rejected; the accepted ones keep the batch's order (a click before its
 * add-to-cart).
 */
export function messagesOf({ accepted, duplicates, rejected, sentAt }) {
  const tSent = Number.isFinite(sentAt) ? sentAt : null
  return [
    ...accepted.map((event) => ({ type: 'accepted', envelope: event, t_sent: tSent })),
    // A duplicate is shown without the times of a copy that was not stored.
    ...duplicates.map(({ received_at, t_corrected, ...event }) => ({ type: 'duplicate', envelope: event })),
    ...rejected.map(({ index, error, envelope }) => ({ type: 'rejected', index, error: clip(error, 300), envelope: summary(envelope) }))
  ]
}

/**
 * Calls `found(events)` with the events of the NDJSON `file` that have an event id, a chunk's
 * worth at a time, and returns whether its last line was cut short.
 */
function readStored(file, found) {
  let rest = ''
  const eventOf = (line) => {
    try {
      const event = line && JSON.parse(line)
      return event && event.event_id && event.user ? event : null
    } catch {
      // A crash mid-write can leave a line cut short; its event was never acknowledged, so it is
      // skipped.
      return null
    }
  }
  const input = openSync(file, 'r')
  const chunk = Buffer.alloc(CHUNK)
  // A character cut by the chunk's end is completed by the next chunk.
  const text = new StringDecoder('utf8')
  let bytes = readSync(input, chunk, 0, CHUNK, null)
  while (bytes > 0) {
    const lines = (rest + text.write(chunk.subarray(0, bytes))).split('\n')
    rest = lines.pop()
    found(lines.map(eventOf).filter(Boolean))
    bytes = readSync(input, chunk, 0, CHUNK, null)
  }
  closeSync(input)
  found([eventOf(rest)].filter(Boolean))
  return rest != ''
}

/**
 * Creates a collector that appends each accepted event as one line of an NDJSON file.
 *
 * Each batch is written with one synchronous write before the relay answers, so an event that
 * was answered 2xx survives the process being killed right after. Event ids already in the
 * file are read at start into the relay's memory store, so a resent event is acknowledged and
 * stored once, across restarts too (the last 200,000 ids, as the store keeps them).
 *
 * It takes every origin (`*`): the inspector stands in front of staging shops on other origins
 * and Shopify pixels, whose sandbox sends `Origin: null`. It trusts no proxy, so `user.ip` is
 * the connection's peer, sets no cookie, since the demo's pages renew the uid themselves, and no
 * rate limit, since a developer's pages and tests all come from one address.
 */
export function createCollector({ file, maxBodyBytes, keys = [DEMO_KEY] }) {
  mkdirSync(dirname(file), { recursive: true })
  const store = memoryStore()
  const cutShort = existsSync(file) && readStored(file, store.remember)
  const fd = openSync(file, 'a')
  // The next event starts on a fresh line, so that a cut-short line cannot swallow it.
  if (cutShort) writeSync(fd, '\n')

  const listeners = new Set()
  const recent = []
  const counts = { accepted: 0, duplicate: 0, rejected: 0 }
  const publish = (message) => {
    counts[message.type]++
    recent.push(message)
    if (recent.length > RECENT) recent.shift()
    for (const listener of listeners) listener(message)
  }

  const relay = createRelay({
    keys: [...keys],
    // One synchronous write to the file opened above rather than the relay's fileSink, which
    // opens its file on the first batch: a data file that cannot be written fails the start,
    // and the fresh line goes before any event.
    sink: async (events) => {
      writeSync(fd, events.map((event) => JSON.stringify(event) + '\n').join(''))
    },
    store,
    origins: '*',
    trustProxy: 0,
    // One developer's pages and tests, all from one address: no rate limit.
    rateLimit: false,
    cookie: false,
    maxBodyBytes,
    onBatch: (report) => messagesOf(report).forEach(publish),
    // A client that went before its body ended (ECONNRESET) is no failure of the collector's.
    onError: (error) => error.code != 'ECONNRESET' && console.error('discovery-feedback: collector:', error)
  })

  return {
    handle: toNodeHandler(relay),
    /** Calls back with every accepted, duplicate and rejected envelope; returns the unsubscribe. */
    subscribe(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    /** Returns the last messages, for an inspector that connects late. */
    recent: () => recent.slice(),
    counts,
    close: () => closeSync(fd)
  }
}
