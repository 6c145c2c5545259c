import type { EventProperties, LineItem } from '../shared/types'
import { fnv1a32 } from './dedupe'
import type { PurchaseField } from './types'

/*
 * The figures of an order's purchase, which two copies of it (the page's and the webhook's) are
 * compared by: the first copy is the one that counts, and where the other differs (a zero
 * discount left out, a rounding, a line the page did not know of) the difference is counted in
 * the relay's metrics (df_relay_order_differences_total), by field, for the shop to look into.
 * The store keeps the first copy's figures as one short text under the order's `.f.` key.
 */

/** The fields two copies of a purchase are compared by, in the order the figures hold them. */
export const COMPARED_FIELDS: readonly PurchaseField[] = ['currency', 'revenue', 'total_tax', 'total_shipping', 'total_discount', 'line_items']

/** The lines as one digest, whatever their order: a page and a webhook may list them differently. */
function linesDigest(lines: LineItem[]): string {
  const each = lines.map((line) => JSON.stringify([line.item_id, line.variant_item_id, line.unit_price, line.quantity])).sort()
  return fnv1a32(each.join('\n')).toString(36)
}

/** A purchase's figures as one text: its currency, its amounts ('' for one left out) and a digest of its lines. */
export function figuresOf(purchase: EventProperties['purchase']): string {
  const { currency, revenue, total_tax, total_shipping, total_discount, line_items } = purchase
  return JSON.stringify([currency, revenue, total_tax ?? '', total_shipping ?? '', total_discount ?? '', linesDigest(line_items)])
}

/** The fields in which two copies' figures differ; none when the first's are unknown (a store written before figures were kept). */
export function differingFields(first: string, second: string): PurchaseField[] {
  let before: unknown
  try {
    before = JSON.parse(first)
  } catch {
    return []
  }
  if (!Array.isArray(before) || before.length != COMPARED_FIELDS.length) return []
  const after = JSON.parse(second) as unknown[]
  return COMPARED_FIELDS.filter((_, index) => before[index] !== after[index])
}
