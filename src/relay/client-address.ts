/*
 * The shopper's address, as SPEC's `user.ip` wants it, from a request that may have passed
 * proxies: each appends the address it got the request from to X-Forwarded-For (or Forwarded).
 * Only the proxies the shop declares are believed: anything before them in the chain was
 * written by whoever sent the request, and a shopper can send any header.
 */

/** An address as bytes, or undefined when it is none: IPv4 as 4 bytes, IPv6 as 16 (an IPv4-mapped one as its IPv4). */
function parse(address: string): number[] | undefined {
  if (/^\d+\.\d+\.\d+\.\d+$/.test(address)) {
    const bytes = address.split('.').map(Number)
    return bytes.every((byte) => byte <= 255) ? bytes : undefined
  }
  if (!address.includes(':')) return
  const mapped = address.match(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i)
  if (mapped) return parse(mapped[1])
  const bytes = parse6(address)
  // ::ffff:c633:6417 is 198.51.100.23 too.
  const isMapped = bytes && bytes.slice(0, 10).every((byte) => byte == 0) && bytes[10] == 255 && bytes[11] == 255
  return isMapped ? bytes.slice(12) : bytes
}

/** An IPv6 address in groups as 16 bytes, or undefined. */
function parse6(address: string): number[] | undefined {
  const [head, tail, ...more] = address.split('::')
  if (more.length) return
  const groups = (part: string | undefined) => (part ? part.split(':') : [])
  const left = groups(head)
  const right = groups(tail)
  const missing = 8 - left.length - right.length
  if (tail === undefined ? missing != 0 : missing < 1) return
  const all = [...left, ...Array(tail === undefined ? 0 : missing).fill('0'), ...right]
  if (!all.every((group) => /^[0-9a-f]{1,4}$/i.test(group))) return
  return all.flatMap((group) => [parseInt(group, 16) >> 8, parseInt(group, 16) & 255])
}

/** A range such as 10.0.0.0/8 or 2001:db8::/32 (a lone address is a range of one). */
function parseRange(range: string): { bytes: number[]; bits: number } {
  const [address, prefix] = range.split('/')
  const bytes = parse(address)
  const bits = prefix === undefined ? (bytes ? bytes.length * 8 : NaN) : Number(prefix)
  if (!bytes || !Number.isInteger(bits) || bits < 0 || bits > bytes.length * 8) {
    throw new TypeError('discovery-feedback: relay: trustProxy ' + range + ' is no address or range')
  }
  return { bytes, bits }
}

const inRange = (bytes: number[], range: { bytes: number[]; bits: number }) =>
  bytes.length == range.bytes.length &&
  range.bytes.every((byte, index) => {
    const bits = Math.min(8, Math.max(0, range.bits - index * 8))
    const mask = (0xff << (8 - bits)) & 0xff
    return (byte & mask) == (bytes[index] & mask)
  })

/** Canonical text of an address (RFC 5952): IPv4 dotted; IPv6 in groups, its longest run of two or more zero groups as '::'. */
function format(bytes: number[]) {
  if (bytes.length == 4) return bytes.join('.')
  const groups = Array.from({ length: 8 }, (_, index) => (bytes[index * 2] << 8) | bytes[index * 2 + 1])
  let start = -1
  let length = 0
  for (let index = 0; index < 8; index++) {
    let run = 0
    while (index + run < 8 && groups[index + run] == 0) run++
    if (run > length && run > 1) {
      start = index
      length = run
    }
  }
  const text = (part: number[]) => part.map((group) => group.toString(16)).join(':')
  return start < 0 ? text(groups) : text(groups.slice(0, start)) + '::' + text(groups.slice(start + length))
}

/** An address as a proxy may write it: with a port (192.0.2.1:51234, [2001:db8::1]:51234) or in brackets. */
const withoutPort = (hop: string) => hop.replace(/^\[([^\]]+)\](?::\d+)?$/, '$1').replace(/^(\d+\.\d+\.\d+\.\d+):\d+$/, '$1')

/**
 * The node of each element's `for=` in a Forwarded header (RFC 7239), in order, as written, with
 * its port if any (withoutPort takes it off); '' for an element without one, or whose value is
 * not a whole token or quoted string. Elements are split at every comma first: no node holds a
 * comma, and a quote the client left open must not run on into the elements the trusted proxies
 * appended after it (`for="9.9.9.9, for=198.51.100.7` is two elements, the first unreadable).
 */
const forwardedFor = (header: string) =>
  header.split(',').map((element) => {
    const pair = element.split(';').find((part) => /^\s*for\s*=/i.test(part))
    const value = pair ? pair.slice(pair.indexOf('=') + 1).trim() : ''
    const node = value.match(/^"([^"\\]*)"$|^([^"\s]*)$/)
    return node ? (node[1] ?? node[2]) : ''
  })

export interface AddressOptions {
  trustProxy?: number | string[]
  proxyHeader?: 'x-forwarded-for' | 'forwarded'
  ipHeader?: string
  ip?: 'full' | 'truncate' | 'drop'
}

/**
 * Makes the function that finds a request's client address. With a number of trusted proxies,
 * the client is that many hops before the peer; with address ranges, the last hop not in them.
 * A peer address the platform does not give (a Web handler has none) counts as the first
 * trusted proxy, the platform's own.
 */
export function clientAddress({ trustProxy = 0, proxyHeader = 'x-forwarded-for', ipHeader, ip = 'full' }: AddressOptions) {
  const ranges = Array.isArray(trustProxy) ? trustProxy.map(parseRange) : undefined
  const header = ipHeader?.toLowerCase()

  const found = (headers: Headers, peer: string | undefined): string | undefined => {
    const stated = header && headers.get(header)?.trim()
    if (stated) return stated
    if (!ranges && !trustProxy) return peer
    // Only the header the trusted proxies write: the other one is whatever the shopper sent.
    const listed = proxyHeader == 'forwarded' ? forwardedFor(headers.get('forwarded') || '') : (headers.get('x-forwarded-for') || '').split(',')
    const hops = listed.map((hop) => withoutPort(hop.trim())).filter(Boolean)
    // Nearest last: the peer, then the addresses each proxy appended, back towards the shopper.
    const chain = peer ? [...hops, peer] : hops
    if (!ranges) return chain[Math.max(0, chain.length - 1 - (trustProxy as number) + (peer ? 0 : 1))]
    for (let index = chain.length - 1; index >= 0; index--) {
      const bytes = parse(chain[index])
      if (!bytes || !ranges.some((range) => inRange(bytes, range))) return chain[index]
    }
    return chain[0]
  }

  /** An address as the privacy setting allows it: whole, truncated as analytics tools do (the network, not the device), or none. */
  const allowed = (address: string | undefined): string | undefined => {
    const bytes = address && ip != 'drop' ? parse(withoutPort(address)) : undefined
    if (!bytes) return
    if (ip == 'truncate') bytes.fill(0, bytes.length == 4 ? 3 : 6)
    return format(bytes)
  }

  return {
    /** The request's client address. */
    of: (headers: Headers, peer: string | undefined) => allowed(found(headers, peer)),
    /**
     * The client a rate limit counts, whatever the privacy setting: its IPv4 address, or its
     * IPv6 /64 (one host may hold a whole /64 and change address within it at will); undefined
     * when the request shows none.
     */
    client(headers: Headers, peer: string | undefined): string | undefined {
      const address = found(headers, peer)
      const bytes = address ? parse(withoutPort(address)) : undefined
      if (!bytes) return
      return bytes.length == 4 ? bytes.join('.') : format([...bytes.slice(0, 8), 0, 0, 0, 0, 0, 0, 0, 0]) + '/64'
    },
    /** An address an envelope brought (a server sender's), under the same privacy setting. */
    allowed
  }
}
