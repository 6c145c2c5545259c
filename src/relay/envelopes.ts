import { validate } from '../shared/rules'
import type { Envelope, User } from '../shared/types'

// SPEC "Errors": a request without an API key is told one must be provided.
export const KEY_MISSING = 'An API key must be provided.'
export const KEY_INVALID = 'The API key is not valid.'

const isString = (value: unknown): value is string => typeof value == 'string'
const isId = (value: unknown) => isString(value) && value.length > 0 && value.length <= 32

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
  const user = given.user as Record<string, unknown>
  if (!user || typeof user != 'object') return { error: name + 'user must be an object' }
  for (const field of ['uid', 'sid']) {
    if (!isId(user[field])) return { error: name + 'user.' + field + ' must be a string of 1 to 32 characters' }
  }
  for (const field of ['ip', 'ua', 'email']) {
    if (user[field] != null && !isString(user[field])) return { error: name + 'user.' + field + ' must be a string' }
  }
  if (user.lang != null && !(Array.isArray(user.lang) && user.lang.every(isString))) return { error: name + 'user.lang must be an array of strings' }
  const checked: User = { uid: user.uid as string, sid: user.sid as string }
  for (const field of ['email', 'ip', 'ua'] as const) if (user[field] != null) checked[field] = user[field] as string
  if (user.lang != null) checked.lang = [...(user.lang as string[])]
  const event = { event: given.event, properties, key: given.key, t_client: given.t_client, user: checked } as Envelope
  if (given.event_id != null) event.event_id = given.event_id as string
  return { event }
}
