import type { RelayEvent } from './types'

/**
 * A sink's failure that says when to try again, which the relay passes on as Retry-After, and
 * which of the events did reach their destination before it failed: the relay marks those as
 * delivered, so that the sender's resend does not bring them a second time.
 */
export class SinkUnavailable extends Error {
  /**
   * Says the sink cannot take events now, and when it may again.
   * @param message - Why, for the relay's log and its 503 answer.
   * @param retryAfterMs - Milliseconds until the sink may take events again.
   * @param delivered - Events of the failed call that were delivered all the same.
   */
  constructor(
    message: string,
    /** Milliseconds until the sink may take events again. */
    readonly retryAfterMs: number,
    /** Events of the failed call that were delivered all the same. */
    readonly delivered: RelayEvent[] = []
  ) {
    super(message)
    this.name = 'SinkUnavailable'
  }
}
