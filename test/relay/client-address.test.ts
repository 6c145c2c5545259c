// @vitest-environment node
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { createRelay, type RelayOptions } from '../../src/relay'
import { envelope, recordingSink } from './support'

// The user.ip a sink gets, from the request as each platform hands it over: the peer address
// (Node's socket, Deno, Bun) or none (a Web handler), and whatever headers reached the relay.

type AddressOptions = Pick<RelayOptions, 'trustProxy' | 'proxyHeader' | 'ipHeader' | 'ip'>

async function ipFor(options: AddressOptions, headers: Record<string, string>, peer: string | undefined, user?: Record<string, string>) {
  const { sink, events } = recordingSink()
  const relay = createRelay({ keys: ['KEY'], sink, serverSecrets: [SERVER_SECRET], ...options })
  const body = JSON.stringify([user ? envelope({ user }) : envelope()])
  const response = await relay.fetch(new Request('http://shop.test/df/events', { method: 'POST', headers, body }), {
    remoteAddress: peer
  })
  expect(response.status).toBe(200)
  return events()[0].user.ip
}

const SHOPPER = '198.51.100.23'
// The shop's server sender: the only one whose envelope may give the shopper's ip.
const SERVER_SECRET = 'the-shops-server-secret-0123'
const FROM_SERVER = { authorization: 'Bearer ' + SERVER_SECRET }
const FORGED = '6.6.6.6'

describe('no trusted proxy (the default)', () => {
  it('takes the peer, and never a forwarding header the shopper sent', async () => {
    expect(await ipFor({}, {}, SHOPPER)).toBe(SHOPPER)
    expect(await ipFor({}, { 'x-forwarded-for': FORGED }, SHOPPER)).toBe(SHOPPER)
    expect(await ipFor({}, { forwarded: `for=${FORGED}` }, SHOPPER)).toBe(SHOPPER)
    expect(await ipFor({ trustProxy: 0 }, { 'x-forwarded-for': FORGED, 'x-real-ip': FORGED }, SHOPPER)).toBe(SHOPPER)
  })

  it("writes Node's IPv4-mapped peer as IPv4, an IPv6 peer in short form", async () => {
    expect(await ipFor({}, {}, '::ffff:198.51.100.23')).toBe(SHOPPER)
    expect(await ipFor({}, {}, '2001:0db8:0000:0000:0000:0000:0000:0001')).toBe('2001:db8::1')
  })

  it('leaves user.ip out when the peer is no address', async () => {
    expect(await ipFor({}, {}, 'not-an-address')).toBeUndefined()
  })
})

describe('trusted proxies by count', () => {
  it('behind one proxy: the address it appended, not what the shopper wrote before it', async () => {
    expect(await ipFor({ trustProxy: 1 }, { 'x-forwarded-for': SHOPPER }, '10.0.0.2')).toBe(SHOPPER)
    expect(await ipFor({ trustProxy: 1 }, { 'x-forwarded-for': `${FORGED}, ${SHOPPER}` }, '10.0.0.2')).toBe(SHOPPER)
  })

  it('behind two (a CDN, then a load balancer)', async () => {
    const cdn = '172.70.1.1'
    expect(await ipFor({ trustProxy: 2 }, { 'x-forwarded-for': `${SHOPPER}, ${cdn}` }, '10.0.0.2')).toBe(SHOPPER)
    expect(await ipFor({ trustProxy: 2 }, { 'x-forwarded-for': `${FORGED},${SHOPPER} , ${cdn}` }, '10.0.0.2')).toBe(SHOPPER)
  })

  it('a request that passed fewer proxies than declared gets the farthest address known, never a made-up one', async () => {
    expect(await ipFor({ trustProxy: 2 }, {}, '10.0.0.2')).toBe('10.0.0.2')
  })

  it('a Web handler without a peer address: the platform is the first proxy', async () => {
    expect(await ipFor({ trustProxy: 1 }, { 'x-forwarded-for': `${FORGED}, ${SHOPPER}` }, undefined)).toBe(SHOPPER)
    expect(await ipFor({ trustProxy: 2 }, { 'x-forwarded-for': `${FORGED}, ${SHOPPER}, 172.70.1.1` }, undefined)).toBe(SHOPPER)
    // Nothing trusted and no peer: nothing to tell.
    expect(await ipFor({}, { 'x-forwarded-for': SHOPPER }, undefined)).toBeUndefined()
  })
})

describe('trusted proxies by range', () => {
  it('IPv4 ranges: the nearest address outside them', async () => {
    const trustProxy = ['10.0.0.0/8', '172.16.0.0/12']
    expect(await ipFor({ trustProxy }, { 'x-forwarded-for': `${FORGED}, ${SHOPPER}, 172.20.3.4` }, '10.1.2.3')).toBe(SHOPPER)
    // The peer itself outside the ranges: it is the shopper, whatever it says.
    expect(await ipFor({ trustProxy }, { 'x-forwarded-for': FORGED }, '203.0.113.50')).toBe('203.0.113.50')
    // 172.32.0.1 is outside 172.16.0.0/12: the chain stops there.
    expect(await ipFor({ trustProxy }, { 'x-forwarded-for': `${SHOPPER}, 172.32.0.1` }, '10.1.2.3')).toBe('172.32.0.1')
  })

  it('IPv6 ranges and lone addresses, an IPv4-mapped peer matching an IPv4 range', async () => {
    const trustProxy = ['2001:db8::/32', '192.0.2.10']
    expect(await ipFor({ trustProxy }, { 'x-forwarded-for': `2a02:1210:abcd::7, 2001:db8:1::1` }, '2001:db8:ffff::2')).toBe('2a02:1210:abcd::7')
    expect(await ipFor({ trustProxy }, { 'x-forwarded-for': SHOPPER }, '::ffff:192.0.2.10')).toBe(SHOPPER)
    expect(await ipFor({ trustProxy }, { 'x-forwarded-for': SHOPPER }, '192.0.2.11')).toBe('192.0.2.11')
  })

  it('refuses a range that is no address at start', () => {
    expect(() => createRelay({ keys: ['KEY'], sink: async () => {}, trustProxy: ['10.0.0/8'] })).toThrow(/trustProxy 10.0.0\/8/)
  })
})

describe('the Forwarded header (RFC 7239)', () => {
  it('reads for= with quoted IPv6 and ports, several elements, any case', async () => {
    const header = `for="[2001:db8:cafe::17]:4711";proto=https, For=192.0.2.60;by=203.0.113.43`
    expect(await ipFor({ trustProxy: 1, proxyHeader: 'forwarded' }, { forwarded: header }, '10.0.0.2')).toBe('192.0.2.60')
    expect(await ipFor({ trustProxy: 2, proxyHeader: 'forwarded' }, { forwarded: header }, '10.0.0.2')).toBe('2001:db8:cafe::17')
    expect(await ipFor({ trustProxy: 1, proxyHeader: 'forwarded' }, { forwarded: 'for="198.51.100.23:8080"' }, '10.0.0.2')).toBe(SHOPPER)
    expect(await ipFor({ trustProxy: 1, proxyHeader: 'forwarded' }, { forwarded: 'for="[2001:db8::9]"' }, '10.0.0.2')).toBe('2001:db8::9')
  })

  it('is read only with proxyHeader: forwarded, as the relay guide says: by default a proxy that writes only Forwarded is the address', async () => {
    const proxy = '10.0.0.2'
    expect(await ipFor({ trustProxy: 1 }, { forwarded: `for=${SHOPPER}` }, proxy)).toBe(proxy)
    expect(await ipFor({ trustProxy: 1, proxyHeader: 'forwarded' }, { forwarded: `for=${SHOPPER}` }, proxy)).toBe(SHOPPER)
    // With proxyHeader: forwarded, an X-Forwarded-For the shopper wrote is not believed either.
    expect(await ipFor({ trustProxy: 1, proxyHeader: 'forwarded' }, { forwarded: `for=${SHOPPER}`, 'x-forwarded-for': FORGED }, proxy)).toBe(SHOPPER)
    const options = readFileSync('docs/guide/relay.md', 'utf8').split('## Options')[1]
    expect(options).toMatch(/\| `proxyHeader` \| `'x-forwarded-for'` \| .*`'forwarded'` \(RFC 7239\)/)
  })

  it("a quote the client left open does not swallow the trusted proxy's element", async () => {
    // The client sent `Forwarded: for="9.9.9.9, ` and the proxy appended its own element.
    const header = 'for="9.9.9.9, , for="198.51.100.7:4711"'
    expect(await ipFor({ trustProxy: 1, proxyHeader: 'forwarded' }, { forwarded: header }, '10.0.0.2')).toBe('198.51.100.7')
    expect(await ipFor({ trustProxy: 1, proxyHeader: 'forwarded' }, { forwarded: 'for="9.9.9.9, for=198.51.100.7' }, '10.0.0.2')).toBe('198.51.100.7')
    // Nor does a forged element after the open quote count as one of the proxies'.
    expect(await ipFor({ trustProxy: 1, proxyHeader: 'forwarded' }, { forwarded: 'for="9.9.9.9;by=x", for=198.51.100.7' }, '10.0.0.2')).toBe('198.51.100.7')
  })

  it('an obfuscated or unknown for= gives no address rather than a wrong one', async () => {
    expect(await ipFor({ trustProxy: 1, proxyHeader: 'forwarded' }, { forwarded: 'for=unknown' }, '10.0.0.2')).toBeUndefined()
    expect(await ipFor({ trustProxy: 1, proxyHeader: 'forwarded' }, { forwarded: 'for=_hidden' }, '10.0.0.2')).toBeUndefined()
  })
})

describe('a platform header (ipHeader)', () => {
  it('wins over the peer and the forwarding headers', async () => {
    const headers = { 'cf-connecting-ip': SHOPPER, 'x-forwarded-for': FORGED }
    expect(await ipFor({ ipHeader: 'CF-Connecting-IP' }, headers, '10.0.0.2')).toBe(SHOPPER)
    expect(await ipFor({ ipHeader: 'x-real-ip', trustProxy: 3 }, { 'x-real-ip': ' 2001:db8::5 ' }, undefined)).toBe('2001:db8::5')
  })

  it('a value that is no address gives none', async () => {
    expect(await ipFor({ ipHeader: 'x-real-ip' }, { 'x-real-ip': '<script>' }, '10.0.0.2')).toBeUndefined()
  })
})

describe('privacy', () => {
  it("'truncate' keeps the network: IPv4 /24, IPv6 /48, IPv4-mapped as IPv4", async () => {
    expect(await ipFor({ ip: 'truncate' }, {}, SHOPPER)).toBe('198.51.100.0')
    expect(await ipFor({ ip: 'truncate' }, {}, '2a02:1210:abcd:12:3456:789a:bcde:f012')).toBe('2a02:1210:abcd::')
    expect(await ipFor({ ip: 'truncate' }, {}, '::ffff:198.51.100.23')).toBe('198.51.100.0')
    expect(await ipFor({ ip: 'truncate', trustProxy: 1 }, { 'x-forwarded-for': '203.0.113.77' }, '10.0.0.2')).toBe('203.0.113.0')
  })

  it("'drop' sends none, whatever the headers", async () => {
    expect(await ipFor({ ip: 'drop' }, {}, SHOPPER)).toBeUndefined()
    expect(await ipFor({ ip: 'drop', ipHeader: 'x-real-ip' }, { 'x-real-ip': SHOPPER }, SHOPPER)).toBeUndefined()
  })
})

describe('what the review found', () => {
  it('behind a proxy that writes Forwarded, a forged X-Forwarded-For is ignored (and the other way round)', async () => {
    expect(await ipFor({ trustProxy: 1, proxyHeader: 'forwarded' }, { 'x-forwarded-for': FORGED, forwarded: 'for=198.51.100.23' }, '10.0.0.1')).toBe(SHOPPER)
    expect(await ipFor({ trustProxy: 1 }, { 'x-forwarded-for': SHOPPER, forwarded: `for=${FORGED}` }, '10.0.0.1')).toBe(SHOPPER)
  })

  it("applies 'drop' and 'truncate' to an ip the envelope brought (a server sender's) too", async () => {
    expect(await ipFor({ ip: 'drop' }, FROM_SERVER, '1.2.3.4', { uid: 'u', sid: 's', ip: SHOPPER })).toBeUndefined()
    expect(await ipFor({ ip: 'truncate' }, FROM_SERVER, '1.2.3.4', { uid: 'u', sid: 's', ip: SHOPPER })).toBe('198.51.100.0')
    expect(await ipFor({}, FROM_SERVER, '1.2.3.4', { uid: 'u', sid: 's', ip: SHOPPER })).toBe(SHOPPER)
  })

  it('writes IPv6 canonically, reads ports and hex IPv4-mapped addresses, falls back to the peer without the platform header', async () => {
    expect(await ipFor({}, {}, '1:0:0:2:0:0:0:3')).toBe('1:0:0:2::3')
    expect(await ipFor({ trustProxy: 1 }, { 'x-forwarded-for': '198.51.100.23:51234' }, '10.0.0.1')).toBe(SHOPPER)
    expect(await ipFor({ trustProxy: 1 }, { 'x-forwarded-for': '[2001:db8::9]:51234' }, '10.0.0.1')).toBe('2001:db8::9')
    expect(await ipFor({}, {}, '::ffff:c633:6417')).toBe(SHOPPER)
    expect(await ipFor({ ipHeader: 'x-real-ip' }, {}, SHOPPER)).toBe(SHOPPER)
  })

  it('refuses a range that is none', () => {
    expect(() => createRelay({ keys: ['KEY'], sink: async () => {}, trustProxy: ['10.0.0.0/99'] })).toThrow('trustProxy 10.0.0.0/99 is no address or range')
  })
})
