import type { RelayEvent } from './types'

/** An event a sink's destination refused for good, and its words for why. */
export interface RefusedEvent {
  /** The event, as the sink was given it (or a copy with its `event_id`). */
  event: RelayEvent
  /** Why its destination refused it, in the destination's words: what the page's answer and the dead letter say. */
  error: string
}

/**
 * A sink's failure that names events its destination refused for good (the service answered a
 * 4xx other than 408 and 429 for them alone), every other event of the call being delivered. The
 * relay answers those refused as `rejected`, by name, and hands them to the dead-letter sink; a
 * resend could only be refused again. The rest counts as taken.
 */
export class SinkRefusal extends Error {
  /** The refused events, each with the destination's reason. */
  readonly refused: RefusedEvent[]

  /**
   * @param refused - The refused events, each with the destination's reason.
   */
  constructor(refused: RefusedEvent[]) {
    super(refused[0]?.error || 'the sink refused events')
    this.name = 'SinkRefusal'
    this.refused = refused
  }
}
