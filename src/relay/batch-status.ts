import { KEY_INVALID, KEY_MISSING } from './envelopes'
import { CLAIMED_RETRY_SECONDS, failure, json } from './responses'
import type { BatchReport } from './types'

/**
 * The answer to a batch whose events are settled. 503 while another request holds some of them,
 * its sink still running: the whole batch comes back later, when they are settled. 200 when any
 * was taken or known, or none was refused; else 401, 403 or 400, by what the refusals were.
 */
export function batchAnswer(batch: BatchReport, result: Record<string, unknown>, held: boolean, headers: Record<string, string>): Response {
  if (held) return json(503, failure('some events are being stored by another request', result), { ...headers, 'retry-after': String(CLAIMED_RETRY_SECONDS) })
  if (batch.accepted.length || batch.bots.length || batch.duplicates.length || !batch.rejected.length) return json(200, result, headers)
  const errors = batch.rejected.map(({ error }) => error)
  if (errors.every((error) => error == KEY_MISSING)) return json(401, failure(KEY_MISSING, result), headers)
  // A batch that failed only on keys, with at least one key given but not ours, is forbidden.
  if (errors.every((error) => error == KEY_MISSING || error == KEY_INVALID)) return json(403, failure(KEY_INVALID, result), headers)
  return json(400, failure(errors[0], result), headers)
}
