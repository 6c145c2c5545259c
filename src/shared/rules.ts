import { feedbackError } from './error'
import type { EventName, User } from './types'

/*
 * SPEC "Event kinds" and "User object" as data. Each field maps to a kind letter, with `?`
 * when the field may be left out:
 *   s  non-empty string     r  string, may be empty (a referrer can be)
 *   n  finite number        i  non-negative integer    q  positive integer
 *   l  array of line items  u  user id: 1 to 32 characters (SPEC "Limits")
 *   a  array of language codes
 */
type Schema = Record<string, string>

export const LINE_ITEM: Schema = { item_id: 's', variant_item_id: 's', unit_price: 'n', quantity: 'q' }

export const EVENTS: Record<EventName, Schema> = {
  'click-suggestion': { rid: 's', suggestion: 's' },
  // SPEC: rid is "needed for items that came from the service", so other clicks go without.
  'click-item': { rid: 's?', item_id: 's', variant_item_id: 's' },
  redirect: { rid: 's', suggestion: 's' },
  purchase: {
    order_id: 's',
    currency: 's',
    revenue: 'n',
    total_discount: 'n?',
    total_tax: 'n?',
    total_shipping: 'n?',
    affiliation: 's?',
    line_items: 'l'
  },
  'update-cart': { line_items: 'l' },
  'add-to-cart': { item_id: 's', variant_item_id: 's', quantity: 'q', rid: 's' },
  'view-page': { url: 's', ref: 'r', width: 'i', height: 'i', item_id: 's?', variant_item_id: 's?' }
}

/** SPEC's event names, in the table's order: made once, not on every tracked event. */
export const EVENT_NAMES = Object.keys(EVENTS) as EventName[]

// Fields the site may give about the shopper (options.user, identify(), the server's user).
const USER: Schema = { uid: 'u?', sid: 'u?', email: 'r?', ip: 'r?', ua: 'r?', lang: 'a?' }

const isString = (value: unknown): value is string => typeof value == 'string'
const filled = (value: unknown): value is string => isString(value) && value != ''

const KINDS: Record<string, [test: (value: unknown) => boolean, rule: string]> = {
  // Not null nor an array (described as one): SPEC's properties and line items are objects of named fields.
  o: [(value) => !!value && describe(value) == 'object', 'an object'],
  s: [filled, 'a non-empty string'],
  r: [isString, 'a string'],
  n: [Number.isFinite, 'a finite number'],
  i: [(value) => Number.isInteger(value) && (value as number) >= 0, 'a non-negative integer'],
  q: [(value) => Number.isInteger(value) && (value as number) > 0, 'a positive integer'],
  l: [Array.isArray, 'an array of line items'],
  // SPEC "User object": any non-empty string of at most 32 characters.
  u: [(value) => filled(value) && value.length <= 32, 'a string of 1 to 32 characters'],
  a: [(value) => Array.isArray(value) && value.every(isString), 'an array of language codes']
}

/** Whether a field of this kind holds a number: what a query string, which carries only text, must turn back into one. */
export const holdsNumber = (kind: string) => ['n', 'i', 'q'].includes(kind[0])

// Numbers are shown as they are (NaN, 1.5, -1 explain themselves); other values only by type,
// so no shopper data ends up in a console or an error tracker.
export const describe = (value: unknown) => (typeof value == 'number' ? String(value) : Array.isArray(value) ? 'array' : typeof value)

/** Throws a FeedbackError naming the event, the field and the rule unless `value` is of `kind`. */
function expectKind(event: string, name: string, kind: string, value: unknown) {
  const [test, rule] = KINDS[kind]
  if (!test(value)) throw feedbackError(event, name, 'must be ' + rule + ', got ' + describe(value))
}

/**
 * Checks the object `input`, called `name` in messages, against a schema and returns a copy of
 * the fields it defines, or throws a FeedbackError naming the event, the field (after
 * `prefix`) and the rule.
 */
export function check(event: string, schema: Schema, input: unknown, name: string, prefix = name + '.'): Record<string, unknown> {
  expectKind(event, name, 'o', input)
  // Only the fields SPEC defines are copied: the caller may reuse or change its object after
  // the call, and the queued event must stay as it was when tracked.
  const properties: Record<string, unknown> = {}
  // Own keys: a page that adds an enumerable property to Object.prototype must not add a field.
  for (const field of Object.keys(schema)) {
    const [kind, optional] = schema[field]
    // An object, as checked above.
    const value = (input as Record<string, unknown>)[field]
    const name = prefix + field
    if (value == null) {
      if (!optional) throw feedbackError(event, name, 'is required')
      continue
    }
    expectKind(event, name, kind, value)
    properties[field] = kind == 'l' ? (value as unknown[]).map((item, index) => check(event, LINE_ITEM, item, name + '[' + index + ']')) : value
  }
  return properties
}

/**
 * Throws a FeedbackError naming the event, the field and the names it may take unless `value`
 * is one of them. includes() compares strictly: an object is refused, never converted.
 */
export function expectOneOf(event: string | undefined, field: string, names: string[], value: unknown) {
  if (!names.includes(value as string))
    throw feedbackError(event, field, 'must be one of ' + names.join(', ') + ', got ' + (isString(value) ? 'an unknown name' : describe(value)))
}

/** Returns a clean copy of the properties, or throws a FeedbackError naming event, field and rule. */
export function validate(event: unknown, properties: unknown): Record<string, unknown> {
  expectOneOf(isString(event) ? event : undefined, 'event', EVENT_NAMES, event)
  return check(event as EventName, EVENTS[event as EventName], properties, 'properties', '')
}

/** Checks the identity fields a site gives against SPEC "User object"; returns those given. */
export const checkUser = (event: string, user: unknown): Partial<User> => check(event, USER, user, 'user')
