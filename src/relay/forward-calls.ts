import type { Waiting } from './forward-requests'
import { SinkRefusal, type RefusedEvent } from './sink-refusal'
import { SinkUnavailable } from './sink-unavailable'
import type { RelayEvent } from './types'

/*
 * One call of forwardSink as the entries of its events, and what the call is told once each was
 * answered.
 */

/**
 * The failure of a call as the relay hears it: SinkUnavailable, naming what got through, once
 * anything did; its wait the longest its requests were told, since each failure of one step
 * moves the backoff's end (`retryAt`, ms since epoch).
 */
function callFailure(failure: Error, delivered: RelayEvent[], retryAt: number): Error {
  if (failure instanceof SinkUnavailable || delivered.length) return new SinkUnavailable(failure.message, Math.max(0, retryAt - Date.now()), delivered)
  return failure
}

/**
 * One call's events as waiting entries of `client`'s, and `done` once each was told its fate:
 * with nothing when all were answered 2xx; with SinkRefusal when the others were, naming the
 * events the service refused for good; otherwise with the first failure, naming the events that
 * did get through (a call's events may go in several requests) so that the relay marks them
 * delivered. Events still waiting after `timeout` are `withdrawn` and given up, so that a call
 * never lasts longer than two timeouts: the relay's claims (claimMs) must outlast it.
 */
export function callEntries(
  events: RelayEvent[],
  client: string,
  timeout: number,
  withdraw: (entries: Waiting[]) => Waiting[],
  done: (failure?: Error) => void
): Waiting[] {
  let left = events.length
  let failure: Error | undefined
  let retryAt = 0
  const delivered: RelayEvent[] = []
  const refused: RefusedEvent[] = []
  const teller = (event: RelayEvent) => (error?: Error) => {
    if (error instanceof SinkRefusal) refused.push(...error.refused.filter((refusal) => refusal.event == event))
    else if (error) failure ||= error
    else delivered.push(event)
    if (error instanceof SinkUnavailable) retryAt = Math.max(retryAt, Date.now() + error.retryAfterMs)
    if (--left) return
    clearTimeout(expiry)
    if (failure) done(callFailure(failure, delivered, retryAt))
    else done(refused.length ? new SinkRefusal(refused) : undefined)
  }
  const entries: Waiting[] = events.map((event) => ({ event, client, tell: teller(event) }))
  // Answers come later, in another task, when the expiry is set.
  const expiry = setTimeout(() => {
    const expired = new SinkUnavailable('no request was free for ' + timeout + ' ms', 1000)
    withdraw(entries).forEach(({ tell }) => tell(expired))
  }, timeout)
  return entries
}
