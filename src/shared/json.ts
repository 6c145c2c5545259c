/**
 * JSON text of the plain data this library sends and stores, whatever the page did to the
 * built-in prototypes. Prototype.js 1.6 (still on Magento 1 shops) defines
 * `Array.prototype.toJSON`, which turns every array — `user.lang`, `line_items` — into a
 * string, and the envelope into one SPEC does not allow. `JSON.stringify` hands the replacer
 * the value after `toJSON` ran, but also the object holding the original (ECMA-262,
 * SerializeJSONProperty steps 2–3): returning the original undoes any `toJSON`, and the
 * original is then written as it is.
 */
const original = function (this: Record<string, unknown>, key: string) {
  return this[key]
}

// Our data is plain objects and arrays, so a toJSON can only come from Array.prototype or
// Object.prototype (which `in` sees through the chain). A replacer triples the cost of
// stringify, so it is only paid for on the pages that need it.
export const encode = (value: unknown): string => JSON.stringify(value, 'toJSON' in Array.prototype ? original : undefined)
