import type { RelayEvent } from './types'

/**
 * A sink's failure that says when to try again, which the relay passes on as Retry-After, and
 * which of the events did reach their destination before it failed: the relay marks those as
 * delivered, so that the sender's resend does not bring them a second time.
 */
export class SinkUnavailable extends Error {
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
