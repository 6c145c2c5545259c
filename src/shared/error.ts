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

/** Whether something thrown is one of ours, which names its event and field already. Reading it may throw (a getter). */
export function isFeedbackError(caught: unknown): caught is FeedbackError {
  return !!attempt(() => (caught as FeedbackError).name == 'FeedbackError')
}

/**
 * The text of anything thrown: reading it may throw too (a getter, a toString that throws). A
 * symbol has no text to add to a string: its type is named instead.
 */
export function thrownText(caught: unknown): string {
  return attempt(() => '' + caught) ?? typeof caught + ' thrown'
}

/** What a caller's data or a platform threw, as a FeedbackError: anything at all may be thrown. */
export function asFeedbackError(caught: unknown): FeedbackError {
  return isFeedbackError(caught) ? caught : feedbackError(undefined, undefined, 'failed: ' + thrownText(caught))
}

/**
 * Where every fault ends: shown in the console for the developer, and handed to `onError` for
 * the shop's monitoring. Neither a console that a page replaced nor a failing handler may turn
 * one fault into two, or keep the other from hearing it.
 */
export const reporter = (onError: ((error: FeedbackError) => void) | undefined) => (error: FeedbackError) => {
  attempt(() => console.error(error.message))
  attempt(() => onError?.(error))
}
