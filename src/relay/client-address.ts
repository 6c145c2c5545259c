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
  const [address, bits] = range.split('/')
  const bytes = parse(address)
  if (!bytes) throw new TypeError('discovery-feedback: relay: trustProxy ' + range + ' is no address or range')
  return { bytes, bits: bits === undefined ? bytes.length * 8 : Number(bits) }
}

const inRange = (bytes: number[], range: { bytes: number[]; bits: number }) =>
  bytes.length == range.bytes.length &&
  range.bytes.every((byte, index) => {
    const bits = Math.min(8, Math.max(0, range.bits - index * 8))
    const mask = (0xff << (8 - bits)) & 0xff
    return (byte & mask) == (bytes[index] & mask)
  })

/** Canonical text of an address: IPv4 dotted, IPv6 in groups (an IPv4-mapped one as IPv4). */
const format = (bytes: number[]) =>
  bytes.length == 4
    ? bytes.join('.')
    : Array.from({ length: 8 }, (_, index) => ((bytes[index * 2] << 8) | bytes[index * 2 + 1]).toString(16))
        .join(':')
        .replace(/(^|:)0(:0)+(:|$)/, '::')

/** The addresses a Forwarded header (RFC 7239) lists as `for=`, in order. */
const forwardedFor = (header: string) =>
  [...header.matchAll(/for="?\[?([^\]";,]+)\]?(?::\d+)?"?/gi)].map(([, address]) => address.replace(/:\d+$/, (port) => (address.includes('.') ? '' : port)))

export interface AddressOptions {
  trustProxy?: number | string[]
  ipHeader?: string
  ip?: 'full' | 'truncate' | 'drop'
}

/**
 * Makes the function that finds a request's client address. With a number of trusted proxies,
 * the client is that many hops before the peer; with address ranges, the last hop not in them.
 * A peer address the platform does not give (a Web handler has none) counts as the first
 * trusted proxy, the platform's own.
 */
export function clientAddress({ trustProxy = 0, ipHeader, ip = 'full' }: AddressOptions) {
  const ranges = Array.isArray(trustProxy) ? trustProxy.map(parseRange) : undefined
  const header = ipHeader?.toLowerCase()

  const found = (headers: Headers, peer: string | undefined): string | undefined => {
    if (header) return headers.get(header)?.trim() || undefined
    if (!ranges && !trustProxy) return peer
    const forwarded = headers.get('x-forwarded-for')
    const listed = forwarded ? forwarded.split(',') : forwardedFor(headers.get('forwarded') || '')
    const hops = listed.map((hop) => hop.trim()).filter(Boolean)
    // Nearest last: the peer, then the addresses each proxy appended, back towards the shopper.
    const chain = peer ? [...hops, peer] : hops
    if (!ranges) return chain[Math.max(0, chain.length - 1 - (trustProxy as number) + (peer ? 0 : 1))]
    for (let index = chain.length - 1; index >= 0; index--) {
      const bytes = parse(chain[index])
      if (!bytes || !ranges.some((range) => inRange(bytes, range))) return chain[index]
    }
    return chain[0]
  }

  return (headers: Headers, peer: string | undefined): string | undefined => {
    if (ip == 'drop') return
    const address = found(headers, peer)
    const bytes = address ? parse(address) : undefined
    if (!bytes) return
    // Truncated as analytics tools do: the network, not the device.
    if (ip == 'truncate') bytes.fill(0, bytes.length == 4 ? 3 : 6)
    return format(bytes)
  }
}
