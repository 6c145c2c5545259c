import type { Metrics } from './metrics'
import type { BatchReport, DeadLetter } from './types'

/** The key a refused envelope came with: its own, else the request's; '' for none. */
const keyOf = (envelope: unknown, key: string | null): string => {
  const own = envelope && typeof envelope == 'object' ? (envelope as Record<string, unknown>).key : undefined
  return typeof own == 'string' && own ? own : key || ''
}

/**
 * Counts what became of a batch's envelopes, and hands its refused ones to the dead-letter
 * sink. Only for a batch the page is answered for: one answered 503 comes again, and is counted then.
 */
export function settled(batch: BatchReport, metrics: Metrics, dead: (letters: DeadLetter[]) => void, key: string | null, refusedAt: number) {
  const bots = batch.bots.length
  metrics.events('accepted', batch.accepted.length - batch.accepted.filter((event) => event.bot).length)
  metrics.events('duplicate', batch.duplicates.length)
  metrics.events('rejected', batch.rejected.length)
  metrics.events('bot', bots)
  metrics.orders(batch.orders)
  dead(batch.rejected.map(({ error, envelope }) => ({ error, key: keyOf(envelope, key), refused_at: refusedAt, envelope })))
}
