import { attempt } from './attempt'
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

/**
 * What a caller's data or a platform threw, as a FeedbackError: anything at all may be thrown,
 * and reading it may throw too (a getter, a toString that throws). A symbol has no text to add
 * to a string: its type is named instead.
 */
export function asFeedbackError(caught: unknown): FeedbackError {
  if (attempt(() => (caught as FeedbackError).name == 'FeedbackError')) return caught as FeedbackError
  const text = attempt(() => '' + caught) ?? typeof caught + ' thrown'
  return feedbackError(undefined, undefined, 'failed: ' + text)
}
