import { MAX_BODY, pack, type Body } from '../shared/batch'
import type { Queued, Transport } from '../shared/engine'
import type { ServerDropReason } from './faults'
import { withSendTime } from '../shared/http'
import type { Envelope } from '../shared/types'
import { postBatch } from './post'
import type { ServerTrackerOptions } from './types'

/** What became of an event: taken by the collector, or given up and why. */
export type ServerFate = 'delivered' | ServerDropReason

/** A queued event, the tries it has had, and who waits to hear what became of it (an order webhook). */
export type ServerEntry = Queued & { event: Envelope; tries?: number; settled?: (fate: ServerFate) => void }

/** A request of the server sender, and what gives it up when close() runs out of time. */
export type ServerRequest = Body<ServerEntry> & { controller: AbortController }

/**
 * The server sender's requests: JSON arrays of up to 60 KiB, events that waited for a free slot
 * going together, posted with the shop's secret and given up after `requestTimeout` or when
 * close() runs out of time. An event is tried `maxAttempts` times at most, then dropped as
 * undelivered.
 */
export function createServerTransport(
  { endpoint, secret, requestTimeout = 10000, maxAttempts = 6 }: ServerTrackerOptions,
  store: { remove(entries: ServerEntry[]): void },
  drop: (entries: ServerEntry[], reason: ServerDropReason, detail?: string, said?: string) => void
): Pick<Transport<ServerEntry, ServerRequest>, 'take' | 'post' | 'retry' | 'drop'> & { abandon(): void; carried(): number } {
  // The requests posted and not yet answered, which close() gives up when it runs out of time,
  // and how many events they carry.
  const posting = new Set<AbortController>()
  let carried = 0
  return {
    take: (waiting, most, oversized) => pack(waiting, MAX_BODY, oversized, most).map((body) => ({ ...body, controller: new AbortController() })),
    async post(request) {
      posting.add(request.controller)
      carried += request.entries.length
      try {
        return await postBatch(withSendTime(endpoint), request.body, requestTimeout, request.controller, secret)
      } finally {
        posting.delete(request.controller)
        carried -= request.entries.length
      }
    },
    retry(request, answer) {
      for (const entry of request.entries) entry.tries = (entry.tries || 0) + 1
      const spent = request.entries.filter((entry) => entry.tries! >= maxAttempts)
      if (spent.length) {
        store.remove(spent)
        drop(spent, 'undelivered', 'the collector answered ' + (answer.status || 'nothing') + ' ' + maxAttempts + ' times')
      }
      return request.entries.filter((entry) => entry.tries! < maxAttempts)
    },
    /** Gives up every request still posting. */
    abandon: () => posting.forEach((controller) => controller.abort()),
    /** Events the requests still posting carry. */
    carried: () => carried,
    drop
  }
}
