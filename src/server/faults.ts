import { feedbackError } from '../shared/error'
import type { DropReason } from '../shared/engine'
import type { ServerStats } from './types'

/** Why the server sender gives events up: all but 'expired', since it keeps nothing for days. */
export type ServerDropReason = Exclude<DropReason, 'expired'>

/**
 * Where the server sender's faults end: counted by reason and handed to `onError`, or the
 * console without one. Every message counts the events: a server's drops are about batches.
 */
export function createServerFaults(onError: ((error: Error) => void) | undefined, dropped: ServerStats['dropped']) {
  const report = (error: Error) => {
    try {
      if (onError) onError(error)
      else console.error(error.message)
    } catch {
      // A failing handler must not turn one fault into two.
    }
  }
  const drop = (entries: { event: { event: string } }[], reason: ServerDropReason, detail?: string, said?: string) => {
    const count = entries.length
    dropped[reason] += count
    const why = (detail || entries[0].event.event + ' is too large for a request') + (said ? ': ' + said : '')
    report(feedbackError(undefined, undefined, count + (count == 1 ? ' event' : ' events') + ' dropped: ' + why))
  }
  // Overflow is reported once per burst, not once per event of a 50,000-event burst.
  let overflowing = 0
  const overflow = (count: number, bound: number) => {
    if (!overflowing) {
      queueMicrotask(() => {
        dropped.overflow += overflowing
        report(
          feedbackError(
            undefined,
            undefined,
            overflowing + (overflowing == 1 ? ' event' : ' events') + ' dropped: more than ' + bound + ' waited for the collector'
          )
        )
        overflowing = 0
      })
    }
    overflowing += count
  }
  return { drop, overflow, report }
}
