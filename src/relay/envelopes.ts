import { faultOf, Kind, USER, validate, type Rules } from '../shared/rules'
import { orderEventId } from '../shared/order-event-id'
import { isOrderId } from './dedupe'
import type { Envelope, User } from '../shared/types'

// SPEC "Errors": a request without an API key is told one must be provided.
export const KEY_MISSING = 'An API key must be provided.'
export const KEY_INVALID = 'The API key is not valid.'

const isString = (value: unknown): value is string => typeof value == 'string'
// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

// SPEC "User object" as the tracker checks it (shared/rules.ts), and both ids, which every
// envelope carries: the tracker and the server sender fill them in before sending.
const ENVELOPE_USER = { ...USER, uid: Kind.id, sid: Kind.id } satisfies Rules<User>

/**
 * The envelope's user by those rules: a copy of the fields SPEC defines, or what is wrong with
 * it, naming the field and the rule (not the type of the value it got, as the tracker's errors
 * add).
 */
function checkUser(given: unknown): { error: string } | { user: User } {
  const fault = faultOf(Kind.objectOfFields, given)
  if (fault) return { error: 'user ' + fault }
  const user: Record<string, unknown> = {}
  for (const [field, kind] of Object.entries(ENVELOPE_USER)) {
    // An object, as checked above.
    const value = (given as Record<string, unknown>)[field]
    const fault = faultOf(kind, value)
    if (fault) return { error: 'user.' + field + ' ' + fault }
    if (value != null) user[field] = Array.isArray(value) ? [...value] : value
  }
  return { user: user as unknown as User }
}

/**
 * Checks one envelope against SPEC "Generic event structure" and the keys the relay takes.
 * Returns the error, or a copy holding only the fields SPEC defines, so that nothing else a
 * sender put in (extra keys, `__proto__`, values nested deep enough to break JSON.stringify)
 * reaches a sink.
 */
export function checkEnvelope(envelope: unknown, keys: Set<string>): { error: string } | { event: Envelope } {
  if (!envelope || typeof envelope != 'object' || Array.isArray(envelope)) return { error: 'an envelope must be an object' }
  const given = envelope as Record<string, unknown>
  if (!isString(given.key) || !given.key) return { error: KEY_MISSING }
  if (!keys.has(given.key)) return { error: KEY_INVALID }
  const name = isString(given.event) ? given.event + ': ' : ''
  let properties
  try {
    properties = validate(given.event, given.properties)
  } catch (error) {
    return { error: (error as Error).message.replace('discovery-feedback: ', '') }
  }
  if (!Number.isFinite(given.t_client)) return { error: name + 't_client must be a number of milliseconds' }
  if (given.event_id != null && !(isString(given.event_id) && given.event_id.length <= 64)) {
    return { error: name + 'event_id must be a string of at most 64 characters' }
  }
  // A store keeps its keys as UTF-8, where every lone surrogate becomes U+FFFD: two such ids
  // would be one to it, and one event could pass for another.
  if (isString(given.event_id) && LONE_SURROGATE.test(given.event_id)) {
    return { error: name + 'event_id must be well-formed text: a lone surrogate cannot be told apart from another in the store' }
  }
  const checked = checkUser(given.user)
  if ('error' in checked) return { error: name + checked.error }
  const event = { event: given.event, properties, key: given.key, t_client: given.t_client, user: checked.user } as Envelope
  if (given.event_id != null) event.event_id = given.event_id as string
  // Any other event with an order's id could pass for a purchase where the id alone is known (`?unconfirmed=`).
  if (event.event != 'purchase' && event.event_id && isOrderId(event.event_id))
    return { error: name + "event_id must not be an order's ('order.…' is a purchase's)" }
  // A purchase's id is its order's (shared/order-event-id.ts), whoever sends it: the relay keeps
  // an order's purchases apart by it, so a purchase is given its order's id, whatever id it came
  // with (the service's own clients send none, another sender may make its own): it can neither
  // pass for another order's purchase nor be lost for an id of another shape.
  if (event.event == 'purchase') event.event_id = orderEventId(event.key, (properties as { order_id: string }).order_id)
  return { event }
}
