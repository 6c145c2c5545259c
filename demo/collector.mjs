// This is the reference collector: it does what a server receiving discovery-feedback batches
// must do. README "Collector protocol" describes the contract this file implements.
import { closeSync, existsSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs'
import { dirname } from 'node:path'
import { StringDecoder } from 'node:string_decoder'
import { validate } from '../dist/index.mjs'
import { DEMO_KEY, keyFault, KEY_INVALID, KEY_MISSING } from './access.mjs'
import { readBody } from './request-body.mjs'

export { KEY_MISSING }

const RECENT = 100
const DAY = 864e5

const isString = (value) => typeof value == 'string'
const isId = (value) => isString(value) && value.length > 0 && value.length <= 32

/**
 * Checks one envelope against SPEC "Generic event structure". Returns `{ error }`, or `{ event }`:
 * a copy holding only the fields SPEC defines, so that nothing else a client put in (extra keys,
 * `__proto__`, values nested deep enough to break JSON.stringify) reaches the file or the inspector.
 */
function checkEnvelope(envelope, keys) {
  if (!envelope || typeof envelope != 'object' || Array.isArray(envelope)) return { error: 'an envelope must be an object' }
  const keyError = keyFault(envelope.key, keys)
  if (keyError) return { error: keyError }
  const name = isString(envelope.event) ? envelope.event + ': ' : ''
  let properties
  try {
    properties = validate(envelope.event, envelope.properties)
  } catch (error) {
    return { error: error.message.replace('discovery-feedback: ', '') }
  }
  if (!Number.isFinite(envelope.t_client)) return { error: name + 't_client must be a number of milliseconds' }
  if (envelope.event_id != null && !(isString(envelope.event_id) && envelope.event_id.length <= 64)) {
    return { error: name + 'event_id must be a string of at most 64 characters' }
  }
  const user = envelope.user
  if (!user || typeof user != 'object') return { error: name + 'user must be an object' }
  for (const field of ['uid', 'sid']) {
    if (!isId(user[field])) return { error: name + 'user.' + field + ' must be a string of 1 to 32 characters' }
  }
  for (const field of ['ip', 'ua', 'email']) {
    if (user[field] != null && !isString(user[field])) return { error: name + 'user.' + field + ' must be a string' }
  }
  if (user.lang != null && !(Array.isArray(user.lang) && user.lang.every(isString))) {
    return { error: name + 'user.lang must be an array of strings' }
  }
  const checked = { uid: user.uid, sid: user.sid }
  for (const field of ['email', 'ip', 'ua']) if (user[field] != null) checked[field] = user[field]
  if (user.lang != null) checked.lang = [...user.lang]
  const event = { event: envelope.event, properties, key: envelope.key, t_client: envelope.t_client, user: checked }
  if (envelope.event_id != null) event.event_id = envelope.event_id
  return { event }
}

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

// Retry-After is not a CORS-safelisted response header: without the expose line, a shop's
// script could not read it.
const CORS = { 'access-control-allow-origin': '*', 'access-control-expose-headers': 'Retry-After' }

// The rest of a refused upload may keep arriving for this long after the answer went out.
const LINGER_MS = 5000

/**
 * Answers an upload that is too large while its body is still arriving. Closing the connection
 * on unread data makes TCP reset it, and a reset discards our answer at the client before it
 * is read (EPIPE or ECONNRESET instead of the status). So the answer goes out whole at once
 * (its length declared), the rest of the body is read and thrown away, and the connection
 * closes once that ends, or after LINGER_MS, as HTTP servers linger before a close.
 */
function refuseUpload(request, response, status, body) {
  const text = JSON.stringify(body)
  response.writeHead(status, { ...CORS, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), connection: 'close' })
  response.write(text)
  const close = () => {
    clearTimeout(linger)
    if (!response.writableEnded) response.end()
  }
  const linger = setTimeout(close, LINGER_MS)
  request.on('end', close)
  request.on('close', close)
  request.resume()
}

function answer(response, status, body, headers = {}) {
  response.writeHead(status, { ...CORS, 'content-type': 'application/json', ...headers })
  response.end(JSON.stringify(body))
}

const failure = (message, more) => ({ error: { message }, ...more })

// One request may ask about this many ids; the library asks about 50 at a time.
const MAX_UNCONFIRMED = 200
// One request may carry this many envelopes. The library's 60 KiB bodies hold a few hundred at
// most, and every envelope costs a check and an inspector message, so a body of tiny ones is
// refused whole.
const MAX_ENVELOPES = 1000
// The collector remembers this many event ids for deduplication (about 120 B each) and forgets
// the oldest first, so a resend of an event older than the last 200,000 would be stored again.
const MAX_SEEN = 200000
// The collector reads its file a megabyte at a time, since the file may outgrow what one string
// can hold.
const CHUNK = 1 << 20

/**
 * Creates a collector that appends each accepted event as one line of an NDJSON file.
 *
 * Each batch is written with one synchronous write before the answer goes out, so an event
 * that was answered 2xx survives the process being killed right after. Event ids already in
 * the file are read at start, so a resent event is acknowledged and stored once, across
 * restarts too. Node runs handlers one at a time, which makes check-and-append atomic.
 */
export function createCollector({ file, maxBodyBytes = 256 * 1024, keys = [DEMO_KEY] }) {
  // The collector serves only these merchants: it refuses an unknown key's events instead of
  // storing them.
  const accepted = new Set(keys)
  mkdirSync(dirname(file), { recursive: true })
  const seen = new Set()
  const remember = (id) => {
    seen.add(id)
    if (seen.size > MAX_SEEN) seen.delete(seen.values().next().value)
  }
  const read = (line) => {
    try {
      const id = line && JSON.parse(line).event_id
      if (id) remember(id)
    } catch {
      // A crash mid-write can leave a line cut short; its event was never acknowledged, so it is
      // skipped.
    }
  }
  let rest = ''
  if (existsSync(file)) {
    const input = openSync(file, 'r')
    const chunk = Buffer.alloc(CHUNK)
    // A character cut by the chunk's end is completed by the next chunk.
    const text = new StringDecoder('utf8')
    let bytes = readSync(input, chunk, 0, CHUNK, null)
    while (bytes > 0) {
      const lines = (rest + text.write(chunk.subarray(0, bytes))).split('\n')
      rest = lines.pop()
      lines.forEach(read)
      bytes = readSync(input, chunk, 0, CHUNK, null)
    }
    closeSync(input)
    read(rest)
  }
  const fd = openSync(file, 'a')
  // The next event starts on a fresh line, so that a cut-short line cannot swallow it.
  if (rest) writeSync(fd, '\n')
  const listeners = new Set()
  const recent = []
  const counts = { accepted: 0, duplicate: 0, rejected: 0 }

  const publish = (message) => {
    counts[message.type]++
    recent.push(message)
    if (recent.length > RECENT) recent.shift()
    for (const listener of listeners) listener(message)
  }

  function store(envelopes, request) {
    const lines = []
    const rejected = []
    const messages = []
    let duplicates = 0
    const receivedAt = Date.now()
    // The library adds its send time as ?t_sent=; the gap to our clock is how far the
    // device clock is off, so the event happened at t_client plus that gap. A t_sent that is
    // no time (NaN, Infinity, 0 or less) or more than a day from ours corrects nothing.
    const query = request.url.indexOf('?')
    const sentAt = Number(new URLSearchParams(query < 0 ? '' : request.url.slice(query + 1)).get('t_sent'))
    const skew = sentAt > 0 && Math.abs(receivedAt - sentAt) <= DAY ? receivedAt - sentAt : 0
    envelopes.forEach((envelope, index) => {
      const { error, event } = checkEnvelope(envelope, accepted)
      if (error) {
        rejected.push({ index, error })
        messages.push({ type: 'rejected', index, error: clip(error, 300), envelope: summary(envelope) })
        return
      }
      // SPEC "User object": ip and ua default to those of the incoming request.
      event.user.ip ||= request.socket.remoteAddress
      event.user.ua ||= request.headers['user-agent']
      if (event.event_id && seen.has(event.event_id)) {
        duplicates++
        messages.push({ type: 'duplicate', envelope: event })
      } else {
        const stored = { ...event, received_at: receivedAt, t_corrected: event.t_client + skew }
        if (event.event_id) remember(event.event_id)
        lines.push(JSON.stringify(stored) + '\n')
        // The inspector's clock-skew lint (demo/lints.mjs) reads the send time as the client gave it.
        messages.push({ type: 'accepted', envelope: stored, t_sent: Number.isFinite(sentAt) && sentAt > 0 ? sentAt : null })
      }
    })
    if (lines.length) writeSync(fd, lines.join(''))
    messages.forEach(publish)
    const result = { accepted: lines.length, duplicates, rejected }
    // README "Collector protocol": the answer names which of the events the library handed over
    // unconfirmed (by beacon, or in a request cut short by the page leaving) never arrived, so
    // that the library sends only those again.
    const unconfirmed = new URLSearchParams(query < 0 ? '' : request.url.slice(query + 1)).get('unconfirmed')
    if (unconfirmed != null)
      result.missing = unconfirmed
        .split(',')
        .slice(0, MAX_UNCONFIRMED)
        .filter((id) => id && !seen.has(id))
    return result
  }

  async function handle(request, response) {
    if (request.method == 'OPTIONS') {
      response.writeHead(204, {
        ...CORS,
        'access-control-allow-methods': 'POST, OPTIONS',
        'access-control-allow-headers': request.headers['access-control-request-headers'] || 'content-type',
        'access-control-max-age': '86400'
      })
      return response.end()
    }
    if (request.method != 'POST') return answer(response, 405, failure('use POST'), { allow: 'POST, OPTIONS' })
    const body = await readBody(request, maxBodyBytes)
    if (!body) return refuseUpload(request, response, 413, failure('body is larger than ' + maxBodyBytes + ' bytes'))
    let parsed
    try {
      parsed = JSON.parse(body.toString('utf8'))
    } catch (error) {
      return answer(response, 400, failure('body is not JSON: ' + error.message))
    }
    // The library sends an array; a single SPEC envelope is taken as a batch of one.
    const envelopes = Array.isArray(parsed) ? parsed : [parsed]
    if (envelopes.length > MAX_ENVELOPES) return answer(response, 413, failure('more than ' + MAX_ENVELOPES + ' envelopes in one request'))
    const result = store(envelopes, request)
    if (result.accepted || result.duplicates || !result.rejected.length) return answer(response, 200, result)
    const errors = result.rejected.map(({ error }) => error)
    if (errors.every((error) => error == KEY_MISSING)) return answer(response, 401, failure(KEY_MISSING, result))
    // A batch that failed only on keys, with at least one key given but not ours, is forbidden.
    if (errors.every((error) => error == KEY_MISSING || error == KEY_INVALID)) return answer(response, 403, failure(KEY_INVALID, result))
    answer(response, 400, failure(errors[0], result))
  }

  return {
    handle: (request, response) =>
      handle(request, response).catch((error) => {
        if (!response.headersSent && !request.socket.destroyed) answer(response, 500, failure('collector failed: ' + error.message))
        else response.destroy()
      }),
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
