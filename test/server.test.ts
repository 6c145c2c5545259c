// @vitest-environment node
import { execFileSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { identityCookie } from '../src/server'

describe('identityCookie (discovery-feedback/server)', () => {
  it('renews the uid the browser already has, for 400 days, SameSite=Lax, Secure, readable by the page', () => {
    const { uid, setCookie } = identityCookie('theme=dark; df_uid=V1StGXR8_Z5jdHi6B-myT; df_sid=abc')
    expect(uid).toBe('V1StGXR8_Z5jdHi6B-myT')
    expect(setCookie).toBe('df_uid=V1StGXR8_Z5jdHi6B-myT; Path=/; Max-Age=34560000; SameSite=Lax; Secure')
    expect(setCookie).not.toMatch(/HttpOnly/i)
  })

  it.each([undefined, '', 'df_uid=', 'df_uid=' + 'x'.repeat(33), 'df_uid=a%20b', 'df_uid=%E0%A4%A'])('makes a new uid for %o', (header) => {
    const { uid, setCookie } = identityCookie(header)
    expect(uid).toMatch(/^[\w-]{21}$/)
    expect(setCookie.startsWith('df_uid=' + uid + ';')).toBe(true)
  })

  it('takes a domain, a shorter life and plain http for development', () => {
    expect(identityCookie('df_uid=abc', { domain: 'shop.example', days: 30, secure: false }).setCookie).toBe(
      'df_uid=abc; Path=/; Max-Age=2592000; SameSite=Lax; Domain=shop.example'
    )
    expect(identityCookie('df_uid=abc', { days: 1000 }).setCookie).toContain('Max-Age=34560000')
  })

  it('loads in plain Node by its export name', () => {
    const out = execFileSync(
      process.execPath,
      ['--input-type=module', '-e', "import { identityCookie } from 'discovery-feedback/server'; console.log(identityCookie('df_uid=abc').uid)"],
      { encoding: 'utf8' }
    )
    expect(out.trim()).toBe('abc')
    const cjs = execFileSync(process.execPath, ['-e', "console.log(require('discovery-feedback/server').identityCookie('df_uid=abc').uid)"], {
      encoding: 'utf8'
    })
    expect(cjs.trim()).toBe('abc')
  })
})

describe('createServerTracker (discovery-feedback/server)', () => {
  const shopper = { uid: 'V1StGXR8_Z5jdHi6B-myT', sid: 'Uakgb_J5m9g-0JDMbcJqL', ip: '203.0.113.9', ua: 'Mozilla/5.0 (iPhone)' }
  const order = {
    order_id: 'o-1',
    currency: 'EUR',
    revenue: 19.9,
    line_items: [{ item_id: '42', variant_item_id: '421', unit_price: 19.9, quantity: 1 }]
  }

  async function collector(statuses: number[]) {
    const { createServer } = await import('node:http')
    const bodies: { url: string; events: any[] }[] = []
    const server = createServer((request, response) => {
      let body = ''
      request.on('data', (chunk) => (body += chunk))
      request.on('end', () => {
        const status = statuses.shift() ?? 200
        if (status == 200) bodies.push({ url: request.url!, events: JSON.parse(body) })
        response.writeHead(status, status == 503 ? { 'retry-after': '0.05' } : {}).end('{}')
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    return { url: `http://127.0.0.1:${(server.address() as any).port}/v3/feedback`, bodies, close: () => server.close() }
  }

  it('sends a purchase from a webhook with the shopper\'s ip and ua, batched, retrying a 503', async () => {
    const { createServerTracker } = await import('../src/server')
    const target = await collector([503])
    const tracker = createServerTracker({ key: 'KEY', endpoint: target.url })
    tracker.track('purchase', order, shopper)
    tracker.track('update-cart', { line_items: [] }, shopper)
    await tracker.flush()
    target.close()
    expect(target.bodies).toHaveLength(1)
    expect(target.bodies[0].url).toMatch(/\?t_sent=\d+$/)
    expect(target.bodies[0].events.map((event) => [event.event, event.user])).toEqual([
      ['purchase', shopper],
      ['update-cart', shopper]
    ])
    expect(target.bodies[0].events[0]).toMatchObject({ key: 'KEY', properties: order, event_id: expect.any(String) })
  })

  it.each([
    [{ ...shopper, uid: undefined }, 'discovery-feedback: purchase: user.uid is required on the server'],
    [{ ...shopper, sid: undefined }, 'discovery-feedback: purchase: user.sid is required on the server'],
    [{ ...shopper, sid: '' }, 'discovery-feedback: purchase: user.sid must be a string of 1 to 32 characters'],
    [{ ...shopper, ip: undefined }, 'discovery-feedback: purchase: user.ip is required on the server'],
    [{ ...shopper, uid: 'x'.repeat(40) }, 'discovery-feedback: purchase: user.uid must be a string of 1 to 32 characters']
  ])('says clearly what is missing: %o', async (user, message) => {
    const { createServerTracker } = await import('../src/server')
    const tracker = createServerTracker({ key: 'KEY', endpoint: 'http://127.0.0.1:9/' })
    expect(() => tracker.track('purchase', order, user as never)).toThrow(message)
  })

  it('applies the browser\'s rules to properties', async () => {
    const { createServerTracker } = await import('../src/server')
    const tracker = createServerTracker({ key: 'KEY', endpoint: 'http://127.0.0.1:9/' })
    expect(() => tracker.track('purchase', { ...order, revenue: '19.90' } as never, shopper)).toThrow(
      'discovery-feedback: purchase: revenue must be a finite number, got string'
    )
  })

  it('gives up a batch the collector refuses, and reports it', async () => {
    const { createServerTracker } = await import('../src/server')
    const target = await collector([400])
    const errors: string[] = []
    const tracker = createServerTracker({ key: 'KEY', endpoint: target.url, onError: (error) => errors.push(error.message) })
    tracker.track('purchase', order, shopper)
    await tracker.close()
    target.close()
    expect(errors).toEqual(['discovery-feedback: 1 events dropped: the collector answered 400 after 1 tries'])
  })
})
