import type { FeedbackError } from './types'

/**
 * Builds the one error shape every fault is reported with. The message alone
 * names the event, the field and the rule, so a console line is enough to fix
 * the call.
 */
export function feedbackError(event: string | undefined, field: string | undefined, rule: string): FeedbackError {
  const error = new Error('discovery-feedback: ' + (event ? event + ': ' : '') + (field ? field + ' ' : '') + rule) as FeedbackError
  error.name = 'FeedbackError'
  error.event = event
  error.field = field
  return error
}
