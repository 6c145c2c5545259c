import { nanoid } from 'nanoid'
import type { Envelope, EventName, User } from './types'

// One random id per page, a counter per event: as unique as a random id per event, without
// asking the browser's random source on every click.
const page = nanoid(16) + '.'
let count = 0

/**
 * Wraps validated properties in SPEC's "Generic event structure". `t_client` is taken now,
 * at the call, so events keep their order however late they are sent; `event_id` lets a
 * collector store a resent event once.
 */
export const envelope = (event: EventName, properties: Record<string, unknown>, key: string, user: User): Envelope =>
  ({ event, properties, key, t_client: Date.now(), user, event_id: page + (count++).toString(36) }) as Envelope
