// This module turns the relay's report of one batch into the inspector's messages. A rejected
// envelope may hold anything a client sent, so the inspector gets a bounded summary of it.
import type { BatchReport } from '../relay'
import type { CollectorMessage, OrderCoverage, RejectedSummary, Shown, StoredEvent } from './types'

const isString = (value: unknown): value is string => typeof value == 'string'
const isRecord = (value: unknown): value is Record<string, unknown> => !!value && typeof value == 'object' && !Array.isArray(value)
// Values go into the inspector's messages, lint texts and state cut short, whatever length a
// client sent.
export const clip = (text: string, length = 60) => (text.length > length ? text.slice(0, length) + '…' : text)

// `shown` is what the inspector may show of a value in a rejected envelope: a primitive as it is
// (a string cut short), and of anything else only its kind, since only what the rules accepted
// is safe to walk.
const shown = (value: unknown): Shown =>
  isString(value) ? clip(value, 200) : value === null || typeof value != 'object' ? (value as Shown) : Array.isArray(value) ? '(array)' : '(object)'
// fromEntries defines own properties, so a field named __proto__ stays a field.
const shallow = (object: Record<string, unknown>) =>
  Object.fromEntries(
    Object.keys(object)
      .slice(0, 20)
      .map((field) => [clip(field, 64), shown(object[field])])
  )

/** Returns what the inspector gets of a rejected envelope: a few fields, bounded in size whatever was sent. */
function summary(envelope: unknown): RejectedSummary {
  if (!isRecord(envelope)) return shown(envelope)
  const { properties, user } = envelope
  return {
    event: shown(envelope.event),
    has_key: isString(envelope.key) && envelope.key != '',
    t_client: shown(envelope.t_client),
    event_id: shown(envelope.event_id),
    user:
      user && typeof user == 'object' ? { uid: shown((user as Record<string, unknown>).uid), sid: shown((user as Record<string, unknown>).sid) } : shown(user),
    properties: isRecord(properties) ? shallow(properties) : shown(properties)
  }
}

/**
 * Returns the inspector's messages of one batch the relay reports (its `onBatch`): accepted
 * events as stored, with the send time the client gave for the clock-skew lint (lints.ts);
 * duplicates as they came; rejected envelopes as a bounded summary with the error clipped. The
 * report gives an index for rejected envelopes only, so a batch's messages come accepted first,
 * then duplicates, then rejected; the accepted ones keep the batch's order (a click before its
 * add-to-cart).
 * @param report - The relay's report of one batch (its `onBatch`).
 */
export function messagesOf(report: BatchReport): CollectorMessage[] {
  const { accepted, duplicates, rejected, sentAt, orders } = report
  const tSent = Number.isFinite(sentAt) ? (sentAt as number) : null
  // The relay checked every accepted event against the rules, so its properties are its kind's.
  const stored = (event: BatchReport['accepted'][number]) => event as StoredEvent
  const coverage = new Map(orders.map(({ event, ...report }): [unknown, OrderCoverage] => [event, report]))
  const withOrder = <M extends CollectorMessage>(message: M, event: unknown): M => (coverage.has(event) ? { ...message, order: coverage.get(event) } : message)
  return [
    ...accepted.map((event): CollectorMessage => withOrder({ type: 'accepted', envelope: stored(event), t_sent: tSent }, event)),
    // A duplicate is shown without the times of a copy that was not stored.
    ...duplicates.map((event): CollectorMessage => {
      const { received_at: _received, t_corrected: _corrected, ...rest } = stored(event)
      return withOrder({ type: 'duplicate', envelope: rest }, event)
    }),
    ...rejected.map(({ index, error, envelope }): CollectorMessage => ({ type: 'rejected', index, error: clip(error, 300), envelope: summary(envelope) }))
  ]
}
