/**
 * The letters that keep two names apart, in any order: how many of the longer one's letters
 * the other lacks. A slip of the keyboard keeps nearly all of a name's letters: two swapped
 * (`kye` for `key`, `veiw` for `view`) are 0 apart, one left out, doubled or mistyped
 * (`sesion`, `debugg`, `endpoimt`) 1.
 */
export function lettersApart(a: string, b: string): number {
  let unmatched = b
  for (const letter of a) unmatched = unmatched.replace(letter, '')
  // b's letters that a has too are those taken out of it.
  const shared = b.length - unmatched.length
  return Math.max(a.length, b.length) - shared
}

/**
 * The name of `names` that `given` most likely misspells, compared regardless of case (HTML
 * lowercases attribute names, so `data-autoViewPage` arrives as `autoviewpage`): one at most a
 * letter apart. Undefined when none is: a name further from all of ours is some other
 * script's (Cloudflare's `data-cfasync`, a consent banner's `data-category`), not a slip.
 */
export function nearestName(given: string, names: string[]): string | undefined {
  return names.find((name) => lettersApart(given.toLowerCase(), name.toLowerCase()) <= 1)
}
