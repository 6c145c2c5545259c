import { isSafeNumber, parse } from 'lossless-json'

/*
 * An order webhook's body, parsed so that no id loses a digit. Shopify's ids run to 18 digits
 * (its documented orders/create example: order 820982911946154508, product
 * 788032119674292922), past the 2^53 that JSON.parse keeps exact: it would read the order as
 * 820982911946154500, and the webhook's purchase would get another event id than the pixel's.
 * lossless-json (a well-kept parser of its own) hands every number over as its text; those a
 * double holds exactly become numbers, the rest stay text, digit for digit.
 */

/** A plain object of the body, or null: what each reader below looks into. */
export type Fields = Record<string, unknown>

/** The body's JSON, numbers a double cannot hold kept as their text; throws a SyntaxError naming the position. */
export const parseOrderJson = (text: string): unknown => parse(text, null, (digits) => (isSafeNumber(digits) ? Number(digits) : digits))

/** Whether a value is a JSON object (not null, not an array). */
export const isFields = (value: unknown): value is Fields => typeof value == 'object' && value !== null && !Array.isArray(value)
