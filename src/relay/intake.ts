/*
 * What a request to the relay carries, in every form a sender of SPEC's events uses: the
 * library's batches (docs/reference/collector-protocol.md), one envelope on its own (SPEC "Generic event
 * structure"), and what the service's own clients send. The service's feedback library posts one
 * envelope by sendBeacon with the key only in the query (`?key=`), and without sendBeacon asks
 * for an image whose query string holds the envelope in `qs`'s bracket encoding; the service's
 * SDK posts an event's properties at the top level of the body, beside `event`, `user` and `key`.
 * Here each becomes SPEC's envelope, for the rules to judge like any other.
 */
import { parse } from 'qs'
import { readBodyWithin } from '../shared/read-body'
import { EVENTS, holdsNumber, LINE_ITEM } from '../shared/rules'

// One request may carry this many envelopes, and so claim this many new ids: the tracker's
// 60 KiB bodies hold about 200 (an envelope with its user is 300 B or more).
export const MAX_ENVELOPES = 500

// The envelope's own fields; in the SDK's flattened form, every other field is a property.
const ENVELOPE_FIELDS = new Set(['event', 'key', 't_client', 'user', 'event_id', 'properties'])

/** The envelopes of a request and the bytes it carried them in, or the status and message it is refused with. */
export type Intake = { envelopes: unknown[]; key: string | null; bytes: number } | { status: number; message: string }

const isObject = (value: unknown): value is Record<string, unknown> => !!value && typeof value == 'object' && !Array.isArray(value)

/** A decimal number as a query string writes it, or the text unchanged for the rules to refuse by name. */
const numberOf = (value: unknown) => (typeof value == 'string' && /^-?\d+(\.\d+)?(e[-+]?\d+)?$/i.test(value) ? Number(value) : value)

/** Copies `fields` with the numbers a schema wants turned from text back into numbers. */
function withNumbers(fields: Record<string, unknown>, schema: Record<string, string>) {
  const copy = { ...fields }
  for (const field of Object.keys(schema)) if (holdsNumber(schema[field]) && field in copy) copy[field] = numberOf(copy[field])
  return copy
}

/**
 * The envelope of an image request's query: `qs` bracket encoding (`properties[line_items][0][quantity]=2`),
 * every value text. Bounded as the body is: a few levels deep, a thousand parameters and array
 * entries at most, no field that reaches the object prototype.
 */
function fromQuery(search: string): Record<string, unknown> {
  const given = parse(search, { ignoreQueryPrefix: true, depth: 5, arrayLimit: MAX_ENVELOPES, parameterLimit: 1000 }) as Record<string, unknown>
  const envelope: Record<string, unknown> = { ...given, t_client: numberOf(given.t_client) }
  const schema = EVENTS[given.event as keyof typeof EVENTS]
  if (schema && isObject(given.properties)) {
    const properties = withNumbers(given.properties, schema)
    if (Array.isArray(properties.line_items))
      properties.line_items = properties.line_items.map((item) => (isObject(item) ? withNumbers(item, LINE_ITEM) : item))
    envelope.properties = properties
  }
  return envelope
}

/**
 * Reads a request's envelopes: a GET's from its query (the feedback library's image), a POST's
 * from its JSON body, an array or one envelope, given `timeoutMs` to arrive. `key` is the key the
 * request gives beside them (`?key=`, or the `X-Key` header SPEC "Authentication" names), for
 * envelopes that carry none.
 */
export async function readEnvelopes(request: Request, maxBodyBytes: number, timeoutMs: number): Promise<Intake> {
  const url = new URL(request.url)
  const key = url.searchParams.get('key') || request.headers.get('x-key')
  if (request.method == 'GET') {
    if (!url.searchParams.has('event')) return { status: 400, message: 'a GET request carries its event in the query' }
    return { envelopes: [fromQuery(url.search)], key, bytes: url.search.length }
  }
  let body: Awaited<ReturnType<typeof readBodyWithin>>
  try {
    body = await readBodyWithin(request, maxBodyBytes, timeoutMs)
  } catch {
    // The client went before its body ended: nobody is left to read the answer, and nothing of the relay failed.
    return { status: 400, message: 'the request ended before its body' }
  }
  // Told apart by type: `==` would turn the bytes into text to compare them.
  if (typeof body == 'string') {
    if (body == 'too large') return { status: 413, message: 'body is larger than ' + maxBodyBytes + ' bytes' }
    return { status: 408, message: 'the body did not arrive within ' + timeoutMs / 1000 + ' s' }
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(new TextDecoder().decode(body))
  } catch (error) {
    return { status: 400, message: 'body is not JSON: ' + (error as Error).message }
  }
  // The tracker sends an array; a single SPEC envelope is taken as a batch of one.
  const envelopes = Array.isArray(parsed) ? parsed : [parsed]
  if (envelopes.length > MAX_ENVELOPES) return { status: 413, message: 'more than ' + MAX_ENVELOPES + ' envelopes in one request' }
  return { envelopes, key, bytes: body.length }
}

/** A product without variants is its own variant: the id the service's own clients leave out. */
function withVariant(fields: Record<string, unknown>): [Record<string, unknown>, boolean] {
  if (fields.variant_item_id != null || fields.item_id == null) return [fields, false]
  return [{ ...fields, variant_item_id: fields.item_id }, true]
}

/** The properties with every missing variant filled in (a click's or an add-to-cart's, or each line item's), and whether one was. */
function withVariants(event: unknown, properties: Record<string, unknown>): [Record<string, unknown>, boolean] {
  if (event == 'click-item' || event == 'add-to-cart') return withVariant(properties)
  if ((event != 'purchase' && event != 'update-cart') || !Array.isArray(properties.line_items)) return [properties, false]
  const items = properties.line_items.map((item: unknown) => (isObject(item) ? withVariant(item) : [item, false]))
  if (!items.some(([, filled]) => filled)) return [properties, false]
  return [{ ...properties, line_items: items.map(([item]) => item) }, true]
}

/**
 * An envelope as SPEC's rules expect it, from what the service's own clients send: the
 * request's key where the envelope has none, the SDK's top-level properties gathered into
 * `properties`, and `item_id` as the variant of a click, an add-to-cart or a line item that
 * names none. `filled` says whether a variant was filled in. Anything else is left for the
 * rules to refuse by name.
 */
export function asEnvelope(given: unknown, key: string | null): { envelope: unknown; filled: boolean } {
  if (!isObject(given)) return { envelope: given, filled: false }
  let envelope = given
  if (key && (given.key == null || given.key === '')) envelope = { ...envelope, key }
  // Only an envelope with fields of its own besides SPEC's is the SDK's: one with none has no
  // properties, and is told so.
  if (given.properties === undefined && typeof given.event == 'string') {
    const topLevel = Object.entries(given).filter(([field]) => !ENVELOPE_FIELDS.has(field))
    if (topLevel.length) envelope = { ...envelope, properties: Object.fromEntries(topLevel) }
  }
  if (!isObject(envelope.properties)) return { envelope, filled: false }
  const [properties, filled] = withVariants(envelope.event, envelope.properties)
  // Copied only where something was filled in: most envelopes need nothing, and this runs for each.
  return { envelope: filled ? { ...envelope, properties } : envelope, filled }
}
