/**
 * A name or a value percent-encoded as RFC 3986 §2.3 asks: everything but letters, digits and
 * `-._~` is escaped. encodeURIComponent leaves `!'()*` as they are, and the service's SDK (through
 * `qs`) escapes them, so they are escaped here too, to send the very bytes the SDK sends.
 */
const percentEncode = (text: string) => encodeURIComponent(text).replace(/[!'()*]/g, (character) => '%' + character.charCodeAt(0).toString(16).toUpperCase())

/**
 * The fields of a request as a query string, in the encoding the service's own SDK gives a JSONP
 * request (SPEC "Endpoints" shows none): `qs.stringify` with qs's default options. A nested field
 * is named by its path in brackets and an array entry by its index, so `{ user: { uid: 'u1' } }`
 * is `user%5Buid%5D=u1` (`user[uid]=u1`) and a sort rule `sort%5B0%5D%5Bfield%5D=price`; null is
 * an empty value; undefined, an empty array and an empty object leave nothing. The fields are
 * the plain data of a request body, in the order of their keys. Fields a query cannot hold throw
 * before anything is sent, as JSON.stringify throws for a POST: a cycle overflows the stack, and
 * a string with a lone surrogate makes encodeURIComponent throw a URIError.
 */
export function queryString(fields: Record<string, unknown>): string {
  const pairs: string[] = []
  const add = (name: string, value: unknown) => {
    if (value !== null && typeof value == 'object') {
      for (const key of Object.keys(value)) add(name + '[' + key + ']', (value as Record<string, unknown>)[key])
    } else if (value !== undefined) {
      pairs.push(percentEncode(name) + '=' + percentEncode(value === null ? '' : String(value)))
    }
  }
  for (const name of Object.keys(fields)) add(name, fields[name])
  return pairs.join('&')
}
