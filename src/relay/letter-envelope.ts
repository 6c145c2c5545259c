/*
 * What a dead letter keeps of a refused envelope: what a second look needs to see what a page
 * sent wrong, and no more. A refused envelope may be anything a sender posted, up to the whole
 * body (256 KiB), so it is kept cut short; and it may carry a shopper's personal data, which the
 * relay never hands on for an envelope it did not take, so the user's email, ip and ua are
 * kept as what kind of value they were, never as the value. The uid and sid stay: they are the
 * tracker's random ids, by which the shop finds the shopper's other events.
 */

// Characters of a kept envelope's JSON, about: SPEC's envelope with its user and a purchase of a
// few line items is well under it, so that such an envelope is kept whole.
export const LETTER_ENVELOPE_CHARS = 2048
// A text is kept to this many characters, a field's name to NAME_CHARS.
const TEXT_CHARS = 256
const NAME_CHARS = 64
// Levels of objects and arrays kept: an envelope's line items are at the fourth.
const DEPTH = 6

// The user's fields that are personal data SPEC's envelope carries: kept as their kind only.
const PERSONAL = new Set(['email', 'ip', 'ua'])

const isRecord = (value: unknown): value is Record<string, unknown> => !!value && typeof value == 'object' && !Array.isArray(value)

/** What a value is, in words, without the value: '(removed: text of 23 characters)'. */
const removed = (value: unknown) =>
  '(removed: ' +
  (typeof value == 'string' ? 'text of ' + value.length + ' characters' : value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value) +
  ')'

/** A text cut to `length` characters, marked where it was cut. */
const clip = (text: string, length: number) => (text.length > length ? text.slice(0, length) + '…' : text)

/** The envelope with its user's personal fields replaced by their kind. */
function withoutPersonalData(envelope: unknown): unknown {
  if (!isRecord(envelope) || !isRecord(envelope.user)) return envelope
  const user = Object.entries(envelope.user).map(([field, value]) => [field, PERSONAL.has(field) ? removed(value) : value])
  // fromEntries defines own properties, so a field named __proto__ stays a field.
  return { ...envelope, user: Object.fromEntries(user) }
}

/**
 * A copy of `value` within `budget.left` characters of JSON, about: texts cut to TEXT_CHARS,
 * arrays and objects cut where the budget ends (a last entry says how many more there were),
 * levels beyond DEPTH told by their kind. `budget.cut` says whether anything was left out.
 */
function bounded(value: unknown, budget: { left: number; cut: boolean }, depth: number): unknown {
  if (typeof value == 'string') {
    if (value.length > TEXT_CHARS) budget.cut = true
    const kept = clip(value, TEXT_CHARS)
    budget.left -= kept.length + 2
    return kept
  }
  if (value === null || typeof value != 'object') {
    budget.left -= String(value).length
    return value
  }
  if (depth >= DEPTH) {
    budget.cut = true
    return Array.isArray(value) ? '(an array)' : '(an object)'
  }
  if (Array.isArray(value)) {
    const items: unknown[] = []
    for (const item of value) {
      if (budget.left <= 0) {
        budget.cut = true
        items.push('(' + (value.length - items.length) + ' more)')
        break
      }
      items.push(bounded(item, budget, depth + 1))
      budget.left -= 1
    }
    return items
  }
  const fields = Object.keys(value)
  const kept: [string, unknown][] = []
  for (const field of fields) {
    if (budget.left <= 0) {
      budget.cut = true
      kept.push(['…', '(' + (fields.length - kept.length) + ' more fields)'])
      break
    }
    const name = clip(field, NAME_CHARS)
    budget.left -= name.length + 4
    kept.push([name, bounded((value as Record<string, unknown>)[field], budget, depth + 1)])
  }
  return Object.fromEntries(kept)
}

/** What a dead letter keeps of a refused envelope, and whether it was cut short. */
export function letterEnvelope(envelope: unknown): { envelope: unknown; truncated: boolean } {
  const budget = { left: LETTER_ENVELOPE_CHARS, cut: false }
  const kept = bounded(withoutPersonalData(envelope), budget, 0)
  return { envelope: kept, truncated: budget.cut }
}
