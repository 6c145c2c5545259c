import { feedbackError } from '../shared/error'
import { describe } from '../shared/rules'
import type { LineItem } from '../shared/types'
import type { Fields } from './order-json'

/*
 * Readers of an order's fields, each throwing a FeedbackError that names the webhook's topic, the
 * field and its rule, which the handler answers 400 with: a body that is no order is told what is
 * wrong with it, never an exception or a 5xx.
 */

/** An id as the platform's own pages print it: digits (or the text the platform gave), never a rounded number. */
export function idOf(topic: string, field: string, value: unknown): string {
  // Whole numbers up to 2^53 come as numbers (order-json.ts); larger ones as their digits.
  if (typeof value == 'number' && Number.isSafeInteger(value) && value >= 0) return String(value)
  if (typeof value == 'string' && value.trim()) return value.trim()
  throw feedbackError(topic, field, 'must be an id (digits or text), got ' + (value == null ? 'none' : describe(value)))
}

/** An id where there may be none (a line without a variant): undefined for null, 0 and ''. */
export const optionalIdOf = (topic: string, field: string, value: unknown): string | undefined =>
  value == null || value === 0 || value === '' ? undefined : idOf(topic, field, value)

// Platforms write amounts as decimal text ("404.95"), WooCommerce's line prices as numbers.
const DECIMAL = /^-?\d+(\.\d+)?$/

/** An amount of money, written as a number or as decimal text. */
export function amountOf(topic: string, field: string, value: unknown): number {
  if (typeof value == 'number' && Number.isFinite(value)) return value
  if (typeof value == 'string' && DECIMAL.test(value.trim())) return Number(value)
  throw feedbackError(topic, field, 'must be an amount (a number, or decimal text such as "19.90"), got ' + (value == null ? 'none' : describe(value)))
}

/** An amount the order may leave out: undefined when it does. */
export const optionalAmountOf = (topic: string, field: string, value: unknown): number | undefined =>
  value == null || value === '' ? undefined : amountOf(topic, field, value)

/** A quantity of units: a whole number of 1 or more. */
export function quantityOf(topic: string, field: string, value: unknown): number {
  const quantity = typeof value == 'string' && /^\d+$/.test(value) ? Number(value) : value
  if (typeof quantity == 'number' && Number.isSafeInteger(quantity) && quantity >= 1) return quantity
  throw feedbackError(topic, field, 'must be a whole number of 1 or more, got ' + (value == null ? 'none' : describe(value)))
}

/** A text field such as a currency code: non-empty. */
export function textOf(topic: string, field: string, value: unknown): string {
  if (typeof value == 'string' && value.trim()) return value.trim()
  throw feedbackError(topic, field, 'must be a non-empty string, got ' + (value == null ? 'none' : describe(value)))
}

/** Text the order may leave out or leave empty (an address, a user agent). */
export const optionalTextOf = (value: unknown): string | undefined => (typeof value == 'string' && value.trim() ? value.trim() : undefined)

/** A list of objects (line items, attributes), [] when left out. */
export function listOf(topic: string, field: string, value: unknown): Fields[] {
  if (value == null) return []
  if (Array.isArray(value) && value.every((entry) => typeof entry == 'object' && entry !== null && !Array.isArray(entry))) return value as Fields[]
  throw feedbackError(topic, field, 'must be a list of objects, got ' + describe(value))
}

/** An object field (a money set, the client's details), undefined when left out. */
export function objectOf(topic: string, field: string, value: unknown): Fields | undefined {
  if (value == null) return undefined
  if (typeof value == 'object' && !Array.isArray(value)) return value as Fields
  throw feedbackError(topic, field, 'must be an object, got ' + describe(value))
}

/**
 * The order's lines of products, each made a line item by the platform's `itemOf`, which is told
 * the line, its name in messages (`line_items[2]`) and its product id. A line without a product
 * (a tip, a fee, a custom item, a deleted product) is no item of the catalogue and is left out,
 * as the pixel leaves it.
 */
export function productLinesOf(topic: string, order: Fields, itemOf: (line: Fields, field: string, product: string) => LineItem): LineItem[] {
  return listOf(topic, 'line_items', order.line_items).flatMap((line, index) => {
    const field = 'line_items[' + index + ']'
    const product = optionalIdOf(topic, field + '.product_id', line.product_id)
    return product ? [itemOf(line, field, product)] : []
  })
}
