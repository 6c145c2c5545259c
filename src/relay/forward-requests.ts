import { MAX_BODY, pack } from '../shared/batch'
import type { EngineRequest } from '../shared/engine'
import type { ClientEntry } from './client-queues'
import type { RelayEvent } from './types'

/*
 * What forwardSink sends the service: each event as SPEC's envelope in a request of its own
 * (format 'spec'), or the package's batches (format 'batch'), and the service's answer.
 */

/** An event waiting for a request, whose request it came in, and how to tell its call what became of it. */
export type Waiting = ClientEntry & { event: RelayEvent; tell: (error?: Error) => void }

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

/**
 * Makes the maker of format 'spec''s requests: each waiting event as a request of its own, in
 * the order given. The headers of each key are made once.
 */
export function specRequests(key: string | undefined, headers: Record<string, string>) {
  const byKey = new Map<string, Record<string, string>>()
  // SPEC "General rules" 2 and "Authentication" 2: JSON, and the body's key again as X-Key.
  const headersOf = (key: string) => byKey.get(key) || byKey.set(key, { ...headers, 'content-type': 'application/json', 'x-key': key }).get(key)!
  return (waiting: Waiting[], most: number): Outgoing[] => waiting.slice(0, most).map((entry) => specRequest(entry, key, headersOf))
}

function specRequest(entry: Waiting, key: string | undefined, headersOf: (key: string) => Record<string, string>): Outgoing {
  const envelope = specEnvelope(entry.event, key)
  return {
    body: JSON.stringify(envelope),
    bytes: 0,
    headers: headersOf(envelope.key),
    entries: [entry],
    refusal: (status, message) => {
      const name = entry.event.event + (entry.event.event_id ? ' ' + entry.event.event_id : '')
      return new Error('the service refused ' + name + ' with ' + status + (message ? ': ' + message : ''))
    }
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
