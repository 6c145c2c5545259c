import type { RefusedEvent } from './sink-refusal'
import type { BatchReport, RelayEvent } from './types'

/**
 * Reports the events the sink refused for good among a batch's refusals, each at the index it
 * came at in the request, with the sink's words and the envelope as it came (for the dead-letter
 * sink); resolves the fresh events the sink took. `accepted` are the request's events the rules
 * took, in order: every index the rules did not refuse, one after another.
 */
export function takenAfterRefusals(
  batch: BatchReport,
  fresh: RelayEvent[],
  refused: RefusedEvent[],
  envelopes: unknown[],
  accepted: RelayEvent[]
): RelayEvent[] {
  if (!refused.length) return fresh
  const ruled = new Set(batch.rejected.map(({ index }) => index))
  const indexes = envelopes.map((_, index) => index).filter((index) => !ruled.has(index))
  const indexOf = new Map(accepted.map((event, position) => [event, indexes[position]]))
  for (const { event, error } of refused) {
    const index = indexOf.get(event)!
    batch.rejected.push({ index, error, envelope: envelopes[index] })
  }
  batch.rejected.sort((a, b) => a.index - b.index)
  const gone = new Set(refused.map(({ event }) => event))
  return fresh.filter((event) => !gone.has(event))
}
