import type { PageDropReason } from './delivery'
import { asFeedbackError, feedbackError, reporter } from '../shared/error'
import type { Entry } from './outbox'
import type { FeedbackError } from '../shared/types'
import type { Stats, TrackerOptions } from './types'

const WHY: Record<PageDropReason, string> = {
  too_large: 'too large for a request',
  rejected: 'refused',
  overflow: 'outbox full',
  expired: 'older than 7 days'
}

/**
 * Where every fault of a tracker ends: counted, shown in the console for the developer and
 * handed to `onError` for the shop's monitoring. Options that break the tracker (`broken`) are
 * reported at once, or thrown when `strict`. Returns the counts by reason (`dropped`), the
 * drop of events (`drop`, which returns the error it reported), a caller's fault (`invalid`),
 * the guard of public methods (`guard`) and the report of any other fault (`report`), for the tracker to hand on.
 */
export function createFaults({ onError, strict }: TrackerOptions, broken?: FeedbackError) {
  const dropped: Stats['dropped'] = { invalid: 0, too_large: 0, rejected: 0, overflow: 0, expired: 0 }

  const report = reporter(onError)

  /**
   * Events given up after they were accepted: counted by reason and reported, with the
   * collector's own words for a refusal where its answer gave them (`said`).
   */
  const drop = (entries: Entry[], reason: PageDropReason, detail?: string, said?: string) => {
    dropped[reason] += entries.length
    const one = entries.length == 1
    const error = feedbackError(
      one ? entries[0].event.event : undefined,
      undefined,
      (one ? 'event' : entries.length + ' events') + ' dropped: ' + WHY[reason] + (detail ? ', ' + detail : '') + (said ? ': ' + said : '')
    )
    report(error)
    return error
  }

  /**
   * A caller's fault: counted as invalid and reported, or thrown when `strict`. An event sent
   * along with another that fails its rules ends here too (shared/event-path.ts).
   */
  const invalid = (caught: unknown) => {
    const error = asFeedbackError(caught)
    dropped.invalid++
    if (strict) throw error
    report(error)
  }

  /**
   * Public methods run inside this: nothing a caller's data throws reaches the page, except
   * in strict mode.
   */
  const guard =
    <A extends unknown[], R>(method: (...args: A) => R) =>
    (...args: A): R | undefined => {
      try {
        return method(...args)
      } catch (caught) {
        invalid(caught)
      }
    }

  if (broken) {
    if (strict) throw broken
    report(broken)
  }
  return { dropped, drop, invalid, guard, report }
}
