import type { DiscoveryError } from './types'

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
