import { nanoid } from 'nanoid'
import type { Envelope, EventName, User } from './types'

// One random id per page, a counter per event: as unique as a random id per event, without
// asking the browser's random source on every click.
const page = nanoid(16) + '.'
let count = 0

/**
 * An event tracked while consent is pending: reading the identity cookies needs consent too,
 * so it gets its shopper (`user`) only once consent is given. It is neither stored nor sent
 * before (browser/consent.ts).
 */
export type Unidentified = Omit<Envelope, 'user'> & { user?: undefined }

/**
 * Wraps validated properties in SPEC's "Generic event structure". `t_client` is taken now,
 * at the call, so events keep their order however late they are sent; `event_id` lets a
 * collector store a resent event once. Without a user, the event waits for one (Unidentified).
 */
export function envelope(event: EventName, properties: Record<string, unknown>, key: string, user: User): Envelope
export function envelope(event: EventName, properties: Record<string, unknown>, key: string, user: User | undefined): Envelope | Unidentified
export function envelope(event: EventName, properties: Record<string, unknown>, key: string, user: User | undefined) {
  // The rules checked the properties against the event's fields (shared/rules.ts).
  return { event, properties, key, t_client: Date.now(), user, event_id: page + (count++).toString(36) } as Envelope | Unidentified
}
