/**
 * `length` random characters from the platform's secure random source (Web Crypto, in pages,
 * the pixel's worker and Node alike), each one of the 32 of `0-9a-v`: five bits of a random
 * byte, so that every character is as likely. 21 make 105 bits, as unlikely to repeat as a
 * shopper's id needs. Characters SPEC's ids take and a cookie keeps as they are (shared/ids.ts,
 * OUR_ID).
 */
export function randomId(length = 21): string {
  let id = ''
  for (const byte of crypto.getRandomValues(new Uint8Array(length))) id += (byte & 31).toString(32)
  return id
}
