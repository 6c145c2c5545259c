// Reference collector: what a server receiving discovery-feedback batches must do.
// README "Collector protocol" describes the contract this file implements.
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs'
import { dirname } from 'node:path'
import { validate } from '../dist/index.mjs'

// SPEC "Errors": a request without an API key gets a message saying one must be provided.
export const KEY_MISSING = 'An API key must be provided.'

const RECENT = 100

const isString = (value) => typeof value == 'string'
const isId = (value) => isString(value) && value.length > 0 && value.length <= 32

/** Checks one envelope against SPEC "Generic event structure"; returns the fault, or '' when it is valid. */
export function checkEnvelope(envelope) {
  if (!envelope || typeof envelope != 'object' || Array.isArray(envelope)) return 'an envelope must be an object'
  if (!isString(envelope.key) || !envelope.key) return KEY_MISSING
  const name = isString(envelope.event) ? envelope.event + ': ' : ''
  try {
    validate(envelope.event, envelope.properties)
  } catch (error) {
    return error.message.replace('discovery-feedback: ', '')
  }
  if (!Number.isFinite(envelope.t_client)) return name + 't_client must be a number of milliseconds'
  if (envelope.event_id != null && !(isString(envelope.event_id) && envelope.event_id.length <= 64)) {
    return name + 'event_id must be a string of at most 64 characters'
  }
  const user = envelope.user
  if (!user || typeof user != 'object') return name + 'user must be an object'
  for (const field of ['uid', 'sid']) {
    if (!isId(user[field])) return name + 'user.' + field + ' must be a string of 1 to 32 characters'
  }
  for (const field of ['ip', 'ua', 'email']) {
    if (user[field] != null && !isString(user[field])) return name + 'user.' + field + ' must be a string'
  }
  if (user.lang != null && !(Array.isArray(user.lang) && user.lang.every(isString))) {
    return name + 'user.lang must be an array of strings'
  }
  return ''
}

/** Reads a request body up to `limit` bytes; resolves null as soon as it is known to be larger. */
function readBody(request, limit) {
  return new Promise((resolve, reject) => {
    if (Number(request.headers['content-length']) > limit) return resolve(null)
    const chunks = []
    let size = 0
    request.on('data', (chunk) => {
      size += chunk.length
      if (size > limit) {
        request.pause()
        resolve(null)
      } else chunks.push(chunk)
    })
    request.on('end', () => resolve(Buffer.concat(chunks)))
    request.on('error', reject)
  })
}

// Retry-After is not a CORS-safelisted response header: without the expose line, a shop's
// script could not read it.
const CORS = { 'access-control-allow-origin': '*', 'access-control-expose-headers': 'Retry-After' }

function answer(response, status, body, headers = {}) {
  response.writeHead(status, { ...CORS, 'content-type': 'application/json', ...headers })
  response.end(JSON.stringify(body))
}

const failure = (message, more) => ({ error: { message }, ...more })

/**
 * Creates a collector that appends each accepted event as one line of an NDJSON file.
 *
 * Each batch is written with one synchronous write before the answer goes out, so an event
 * that was answered 2xx survives the process being killed right after. Event ids already in
 * the file are read at start, so a resent event is acknowledged and stored once, across
 * restarts too. Node runs handlers one at a time, which makes check-and-append atomic.
 */
export function createCollector({ file, maxBodyBytes = 256 * 1024 }) {
  mkdirSync(dirname(file), { recursive: true })
  const seen = new Set()
  const text = existsSync(file) ? readFileSync(file, 'utf8') : ''
  const fd = openSync(file, 'a')
  for (const line of text.split('\n')) {
    try {
      const id = line && JSON.parse(line).event_id
      if (id) seen.add(id)
    } catch {
      // A line cut short by a crash mid-write: its event was never acknowledged.
    }
  }
  // Start on a fresh line, so a cut-short line cannot swallow the next event.
  if (text && !text.endsWith('\n')) writeSync(fd, '\n')
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
    // device clock is off, so the event happened at t_client plus that gap.
    const sentAt = Number(new URL(request.url, 'http://collector').searchParams.get('t_sent'))
    const skew = sentAt > 0 ? receivedAt - sentAt : 0
    envelopes.forEach((envelope, index) => {
      const error = checkEnvelope(envelope)
      if (error) {
        rejected.push({ index, error })
        messages.push({ type: 'rejected', index, error, envelope })
      } else if (envelope.event_id && seen.has(envelope.event_id)) {
        duplicates++
        messages.push({ type: 'duplicate', envelope })
      } else {
        // SPEC "User object": ip and ua default to those of the incoming request.
        const user = { ...envelope.user, ip: envelope.user.ip || request.socket.remoteAddress, ua: envelope.user.ua || request.headers['user-agent'] }
        const stored = { ...envelope, user, received_at: receivedAt, t_corrected: envelope.t_client + skew }
        if (envelope.event_id) seen.add(envelope.event_id)
        lines.push(JSON.stringify(stored) + '\n')
        messages.push({ type: 'accepted', envelope: stored })
      }
    })
    if (lines.length) writeSync(fd, lines.join(''))
    messages.forEach(publish)
    return { accepted: lines.length, duplicates, rejected }
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
    if (!body) {
      // Answer at once and drop the connection instead of reading the rest.
      answer(response, 413, failure('body is larger than ' + maxBodyBytes + ' bytes'), { connection: 'close' })
      response.on('finish', () => request.destroy())
      return
    }
    let parsed
    try {
      parsed = JSON.parse(body.toString('utf8'))
    } catch (error) {
      return answer(response, 400, failure('body is not JSON: ' + error.message))
    }
    // The library sends an array; a single SPEC envelope is taken as a batch of one.
    const result = store(Array.isArray(parsed) ? parsed : [parsed], request)
    if (result.accepted || result.duplicates || !result.rejected.length) return answer(response, 200, result)
    const keyless = result.rejected.every(({ error }) => error == KEY_MISSING)
    answer(response, keyless ? 401 : 400, failure(result.rejected[0].error, result))
  }

  return {
    handle: (request, response) =>
      handle(request, response).catch((error) => {
        if (!response.headersSent) answer(response, 500, failure('collector failed: ' + error.message))
        else response.destroy()
      }),
    /** Calls back with every accepted, duplicate and rejected envelope; returns the unsubscribe. */
    subscribe(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    /** The last messages, for an inspector that connects late. */
    recent: () => recent.slice(),
    counts,
    close: () => closeSync(fd)
  }
}
