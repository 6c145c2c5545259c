import type { deadLetters } from './dead-letter'
import type { Metrics } from './metrics'
import type { BatchReport } from './types'

/**
 * Counts what became of a batch's envelopes, and hands its refused ones to the dead-letter
 * sink, with the key the request gave and the address it came from (undefined for the shop's
 * server sender). Only for a batch the page is answered for: one answered 503 comes again, and
 * is counted then.
 */
export function settled(
  batch: BatchReport,
  metrics: Metrics,
  dead: ReturnType<typeof deadLetters>,
  key: string | null,
  refusedAt: number,
  client: string | undefined
) {
  const bots = batch.bots.length
  metrics.events('accepted', batch.accepted.length - batch.accepted.filter((event) => event.bot).length)
  metrics.events('duplicate', batch.duplicates.length)
  metrics.events('rejected', batch.rejected.length)
  metrics.events('bot', bots)
  metrics.orders(batch.orders)
  dead(batch.rejected, key, refusedAt, client)
}
