import type { DiscoveryError } from '../client/types'
import type { FeedbackError } from './types'

/**
 * Builds the one error shape every fault is reported with. The message alone
 * names the event, the field and the rule, so a console line is enough to fix
 * the call.
 */
export function feedbackError(event: string | undefined, field: string | undefined, rule: string): FeedbackError {
  const error = new Error(
    'discovery-feedback: ' + (event ? event + ': ' : '') + (field ? field + ' ' : '') + rule
  ) as FeedbackError
  error.name = 'FeedbackError'
  error.event = event
  error.field = field
  return error
}

/**
 * The discovery client's error, in the same voice: where it happened (a route, or on kind
 * `invalid` a store event and its field) and what went wrong.
 */
export function discoveryError(kind: DiscoveryError['kind'], where: string, message: string, status?: number, field?: string): DiscoveryError {
  return Object.assign(new Error('discovery-feedback: ' + where + ': ' + (field ? field + ' ' : '') + message + (status ? ' (HTTP ' + status + ')' : '')), {
    name: 'DiscoveryError',
    kind,
    status,
    [kind == 'invalid' ? 'event' : 'route']: where,
    field
  }) as DiscoveryError
}
