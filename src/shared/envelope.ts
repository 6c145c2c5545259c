import { randomId } from './random-id'
import { orderEventId } from './order-event-id'
import type { Envelope, EventName, User } from './types'

// One random id per page (80 bits), a counter per event: as unique as a random id per event,
// without asking the browser's random source on every click.
const page = randomId(16) + '.'
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
 * collector store a resent event once. A purchase's id comes from its order, so the same order
 * tracked twice (a reloaded confirmation page, the pixel and the server) is stored once too.
 * Without a user, the event waits for one (Unidentified).
 */
export function envelope(event: EventName, properties: Record<string, unknown>, key: string, user: User): Envelope
export function envelope(event: EventName, properties: Record<string, unknown>, key: string, user: User | undefined): Envelope | Unidentified
export function envelope(event: EventName, properties: Record<string, unknown>, key: string, user: User | undefined) {
  // The rules checked the properties against the event's fields (shared/rules.ts).
  const id = event == 'purchase' ? orderEventId(key, properties.order_id as string) : page + (count++).toString(36)
  return { event, properties, key, t_client: Date.now(), user, event_id: id } as Envelope | Unidentified
}
