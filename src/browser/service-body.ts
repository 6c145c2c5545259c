import { byteLength, type Body } from '../shared/batch'
import { encode } from '../shared/json'
import type { Entry } from './outbox'

/**
 * The body of a request straight to the service (`format: 'spec'`): one event, with SPEC's
 * "Generic event structure" fields and no others. The service takes one event per request and
 * knows no `event_id`, which JSON leaves out once it is undefined; the id stays in the outbox,
 * where it names the stored event.
 */
export function serviceBody(entry: Entry): Body<Entry> {
  const body = encode({ ...entry.event, event_id: undefined })
  return { body, entries: [entry], bytes: byteLength(body) }
}
