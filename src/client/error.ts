import type { DiscoveryError } from './types'

/**
 * The discovery client's error, in the same voice: where it happened (a route, or a store
 * event and its field) and what went wrong, then the details a caller reads.
 */
export const discoveryError = (message: string, details: Partial<DiscoveryError>): DiscoveryError =>
  Object.assign(Error('discovery-feedback: ' + message), { name: 'DiscoveryError', ...details }) as DiscoveryError
