import { feedbackError } from './error'
import type { EventName, EventProperties, LineItem, User } from './types'

/*
 * SPEC "Event kinds" and "User object" as data: tables that give each field a kind by its name.
 * The build writes each kind as the one letter it stands for, because these tables ship in
 * every page's script tag. The compiler holds each table to the public type it checks
 * (types.ts): a field missing from either, a field left out in one and required in the other,
 * or a kind whose test admits values of another type than the field's, does not compile.
 */

/** The kinds of field; `optional…` where the field may be left out (the kind's letter and `?`). */
export const enum Kind {
  /** Objects of named fields, not null nor an array: SPEC's properties, line items and users. */
  objectOfFields = 'o',
  /** A non-empty string: ids, names, a URL. */
  text = 's',
  optionalText = `${text}?`,
  /** A string that may be empty: a referrer is on a direct visit, and so may an email, an IP or a user agent be. */
  textOrEmpty = 'r',
  optionalTextOrEmpty = `${textOrEmpty}?`,
  /** A finite number: prices and amounts. */
  amount = 'n',
  optionalAmount = `${amount}?`,
  /** An integer of 0 or more: a page's width and height. */
  wholeNumber = 'i',
  /** An integer of 1 or more: units of a product. */
  quantity = 'q',
  /** A list of line items, each checked by LINE_ITEM. */
  lineItems = 'l',
  /** SPEC "Limits": a user id or a session id of 1 to 32 characters. */
  id = 'u',
  optionalId = `${id}?`,
  /** A list of language codes. */
  languages = 'a',
  optionalLanguages = `${languages}?`
}

/** The TypeScript type of a kind's values, with `undefined` for an optional kind. */
type ValueOf<K extends Kind> = K extends `${infer Letter extends keyof typeof KINDS}?` ? Admitted<Letter> | undefined : Admitted<K & keyof typeof KINDS>
type Admitted<Letter extends keyof typeof KINDS> = (typeof KINDS)[Letter][0] extends (value: unknown) => value is infer T ? T : never
/** The kinds whose values have exactly the type T. */
type KindOf<T> = { [K in Kind]: [ValueOf<K>] extends [T] ? ([T] extends [ValueOf<K>] ? K : never) : never }[Kind]

/** The rules of an object type's fields: one per field, each of a kind whose values are the field's type. */
export type Rules<Shape> = {
  readonly [Field in keyof Shape]-?: KindOf<Partial<Pick<Shape, Field>> extends Pick<Shape, Field> ? Shape[Field] | undefined : Shape[Field]>
}

/** Rules as the checks read them: field name to kind letter, `?` after it for a field that may be left out. */
type Schema = Record<string, string>

export const LINE_ITEM = { item_id: Kind.text, variant_item_id: Kind.text, unit_price: Kind.amount, quantity: Kind.quantity } satisfies Rules<LineItem>

/**
 * An event's properties as they are sent: a page view's url, ref, width and height, which the
 * tracker fills in from the page when left out (types.ts), are then given.
 */
type Sent<Event extends EventName> = Event extends 'view-page'
  ? Omit<EventProperties[Event], FilledIn> & Required<Pick<EventProperties[Event], FilledIn>>
  : EventProperties[Event]
type FilledIn = 'url' | 'ref' | 'width' | 'height'

/**
 * SPEC's rules of each event's properties, by field: the kind of value each takes (`s` a
 * non-empty string, `n` a finite number, `?` after it for a field that may be left out …), as
 * the tracker, the server sender and the relay check them.
 */
export const EVENTS: Record<EventName, Schema> = {
  'click-suggestion': { rid: Kind.text, suggestion: Kind.text },
  // SPEC: rid is "needed for items that came from the service", so other clicks go without.
  'click-item': { rid: Kind.optionalText, item_id: Kind.text, variant_item_id: Kind.text },
  redirect: { rid: Kind.text, suggestion: Kind.text },
  purchase: {
    order_id: Kind.text,
    currency: Kind.text,
    revenue: Kind.amount,
    total_discount: Kind.optionalAmount,
    total_tax: Kind.optionalAmount,
    total_shipping: Kind.optionalAmount,
    affiliation: Kind.optionalText,
    line_items: Kind.lineItems
  },
  'update-cart': { line_items: Kind.lineItems },
  'add-to-cart': { item_id: Kind.text, variant_item_id: Kind.text, quantity: Kind.quantity, rid: Kind.text },
  'view-page': {
    url: Kind.text,
    ref: Kind.textOrEmpty,
    width: Kind.wholeNumber,
    height: Kind.wholeNumber,
    item_id: Kind.optionalText,
    variant_item_id: Kind.optionalText
  }
} satisfies { [Event in EventName]: Rules<Sent<Event>> }

/** SPEC's event names, in the table's order: made once, not on every tracked event. */
export const EVENT_NAMES = Object.keys(EVENTS) as EventName[]

/** Fields the site may give about the shopper (options.user, identify(), the server's user), any of them on its own. */
export const USER = {
  uid: Kind.optionalId,
  sid: Kind.optionalId,
  email: Kind.optionalTextOrEmpty,
  ip: Kind.optionalTextOrEmpty,
  ua: Kind.optionalTextOrEmpty,
  lang: Kind.optionalLanguages
} satisfies Rules<Partial<User>>

const isString = (value: unknown): value is string => typeof value == 'string'
const filled = (value: unknown): value is string => isString(value) && value != ''

/** Each kind's test, whose type guard is the TypeScript type of its values, and the rule it states in messages. */
const KINDS = {
  // Not null nor an array (described as one).
  [Kind.objectOfFields]: [(value: unknown): value is Record<string, unknown> => !!value && describe(value) == 'object', 'an object'],
  [Kind.text]: [filled, 'a non-empty string'],
  [Kind.textOrEmpty]: [isString, 'a string'],
  // Number.isFinite is true of finite numbers only, which TypeScript's declaration does not say.
  [Kind.amount]: [Number.isFinite as (value: unknown) => value is number, 'a finite number'],
  [Kind.wholeNumber]: [(value: unknown): value is number => Number.isInteger(value) && (value as number) >= 0, 'a non-negative integer'],
  [Kind.quantity]: [(value: unknown): value is number => Number.isInteger(value) && (value as number) > 0, 'a positive integer'],
  // Each item is then checked on its own, by LINE_ITEM.
  [Kind.lineItems]: [Array.isArray as (value: unknown) => value is LineItem[], 'an array of line items'],
  // SPEC "User object": any non-empty string of at most 32 characters.
  [Kind.id]: [(value: unknown): value is string => filled(value) && value.length <= 32, 'a string of 1 to 32 characters'],
  [Kind.languages]: [(value: unknown): value is string[] => Array.isArray(value) && value.every(isString), 'an array of language codes']
} as const

/** Whether a field of this kind holds a number: what a query string, which carries only text, must turn back into one. */
export const holdsNumber = (kind: string) => [Kind.amount, Kind.wholeNumber, Kind.quantity].includes(kind[0] as Kind)

// Numbers are shown as they are (NaN, 1.5, -1 explain themselves); other values only by type,
// so no shopper data ends up in a console or an error tracker.
export const describe = (value: unknown) => (typeof value == 'number' ? String(value) : Array.isArray(value) ? 'array' : typeof value)

/** Whether a field of this kind may be left out: its letter is followed by `?`. */
const isOptional = (kind: string) => kind[1] == '?'

/** The test of a kind's values and the rule it states in messages, by the kind's letter. */
const ruleOf = (kind: string) => KINDS[kind[0] as keyof typeof KINDS]

/**
 * What a field of `kind` holding `value` breaks, in words ('is required', 'must be a string of 1
 * to 32 characters'), or '' when it keeps its rule, by the same rules as check(), which throws
 * instead: for a reader that words its own answers (the relay).
 */
export function faultOf(kind: string, value: unknown): string {
  if (value == null) return isOptional(kind) ? '' : 'is required'
  const [test, rule] = ruleOf(kind)
  return test(value) ? '' : 'must be ' + rule
}

/** Throws a FeedbackError naming the event, the field and the rule unless `value` keeps the rule of `kind`. */
function expectKind(event: string, name: string, kind: string, value: unknown) {
  const [test, rule] = ruleOf(kind)
  if (!test(value)) throw feedbackError(event, name, 'must be ' + rule + ', got ' + describe(value))
}

/**
 * Checks the object `input`, called `name` in messages, against a schema and returns a copy of
 * the fields it defines, or throws a FeedbackError naming the event, the field (after
 * `prefix`) and the rule.
 */
export function check(event: string, schema: Schema, input: unknown, name: string, prefix = name + '.'): Record<string, unknown> {
  expectKind(event, name, Kind.objectOfFields, input)
  // Only the fields SPEC defines are copied: the caller may reuse or change its object after
  // the call, and the queued event must stay as it was when tracked.
  const properties: Record<string, unknown> = {}
  // Own keys: a page that adds an enumerable property to Object.prototype must not add a field.
  for (const field of Object.keys(schema)) {
    const kind = schema[field]
    // An object, as checked above.
    const value = (input as Record<string, unknown>)[field]
    const name = prefix + field
    if (value == null) {
      if (!isOptional(kind)) throw feedbackError(event, name, 'is required')
      continue
    }
    expectKind(event, name, kind, value)
    properties[field] = kind == Kind.lineItems ? (value as unknown[]).map((item, index) => check(event, LINE_ITEM, item, name + '[' + index + ']')) : value
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

/**
 * Returns a clean copy of the properties, or throws a FeedbackError naming event, field and rule.
 * @param event - The event's SPEC name, such as `'purchase'`.
 * @param properties - The properties to check against that event's rules.
 */
export function validate(event: unknown, properties: unknown): Record<string, unknown> {
  expectOneOf(isString(event) ? event : undefined, 'event', EVENT_NAMES, event)
  return check(event as EventName, EVENTS[event as EventName], properties, 'properties', '')
}

/** Checks the identity fields a site gives against SPEC "User object"; returns those given. */
export const checkUser = (event: string, user: unknown): Partial<User> => check(event, USER, user, 'user')
