import { MAX_BODY, pack } from '../shared/batch'
import type { EngineRequest, Queued } from '../shared/engine'
import { errorMessageOf } from '../shared/http'
import type { RelayEvent } from './types'

/*
 * What forwardSink sends the service: each event as SPEC's envelope in a request of its own
 * (format 'spec'), or the package's batches (format 'batch'), and the service's answer.
 */

/** An event waiting for a request, and how to tell its call what became of it. */
export type Waiting = Queued & { event: RelayEvent; tell: (error?: Error) => void }

/**
 * A request ready to go: its body and headers, the events it carries, and their error should the
 * service refuse it, with the message the service gave (`message`, once answered).
 */
export interface Outgoing extends EngineRequest<Waiting> {
  headers: Record<string, string>
  refusal: (status: number, message: string) => Error
  message?: string
}

/** SPEC's envelope ("Generic event structure") and nothing else: the relay's times and the event id left out, the clock's error corrected. */
const specEnvelope = (event: RelayEvent, key: string | undefined) => ({
  event: event.event,
  properties: event.properties,
  key: key || event.key,
  t_client: event.t_corrected,
  user: event.user
})

/** The envelope for a collector of this package's protocol: its event id kept for deduplication, the relay's times taken out, the clock's error corrected. */
const batchEnvelope = ({ received_at, t_corrected, ...event }: RelayEvent, key: string | undefined) => ({
  ...event,
  key: key || event.key,
  t_client: t_corrected
})

/** Each waiting event as a request of its own (format 'spec'), the oldest first. */
export const specRequests = (waiting: Waiting[], most: number, key: string | undefined, headers: Record<string, string>) =>
  waiting.slice(0, most).map((entry) => specRequest(entry, key, headers))

function specRequest(entry: Waiting, key: string | undefined, headers: Record<string, string>): Outgoing {
  const envelope = specEnvelope(entry.event, key)
  const name = entry.event.event + (entry.event.event_id ? ' ' + entry.event.event_id : '')
  return {
    body: JSON.stringify(envelope),
    bytes: 0,
    // SPEC "General rules" 2 and "Authentication" 2: JSON, and the body's key again as X-Key.
    headers: { ...headers, 'content-type': 'application/json', 'x-key': envelope.key },
    entries: [entry],
    refusal: (status, message) => new Error('the service refused ' + name + ' with ' + status + (message ? ': ' + message : ''))
  }
}

/**
 * What waited, in JSON arrays of at most 60 KiB, one per free request (format 'batch'): events
 * that waited for a free request go together. An event too large for any is given up at once.
 */
export function batchRequests(
  waiting: Waiting[],
  most: number,
  key: string | undefined,
  headers: Record<string, string>,
  oversized: (entry: Waiting) => void
): Outgoing[] {
  const packed = waiting.map((source) => ({ event: batchEnvelope(source.event, key), source }))
  return pack(packed, MAX_BODY, ({ source }) => oversized(source), most).map((body) => ({
    body: body.body,
    bytes: body.bytes,
    headers: { 'content-type': 'application/json', ...headers },
    entries: body.entries.map(({ source }) => source),
    refusal: (status) => new Error('the service refused the batch: ' + status)
  }))
}

/** What the service answered: status 0 when nothing came within `timeout`; the message of SPEC's error shape ("Errors"), if any. */
export async function postToService(url: string, request: Outgoing, timeout: number) {
  try {
    const response = await fetch(url, { method: 'POST', headers: request.headers, body: request.body, signal: AbortSignal.timeout(timeout) })
    const text = await response.text().catch(() => '')
    return { status: response.status, retryAfter: response.headers.get('retry-after'), message: response.ok ? '' : errorMessageOf(text) || '' }
  } catch {
    // No answer in time: a failure like a 503.
    return { status: 0, retryAfter: null, message: '' }
  }
}
