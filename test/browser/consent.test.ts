import { afterEach, describe, expect, it, vi } from 'vitest'
import { isolateEachTest, make, network, settle } from '../support/helpers'
import { quietConsole } from '../support/console'

const click = (item_id: string) => ({ item_id, variant_item_id: item_id })
const ours = () => ({ cookies: document.cookie, storage: Object.keys(localStorage) })
const nothingOfOurs = { cookies: '', storage: [] }

isolateEachTest()
afterEach(() => {
  delete (navigator as any).globalPrivacyControl
  delete (navigator as any).doNotTrack
})

describe('consent: pending', () => {
  it('stores nothing and sends nothing, then on grant sends the waiting events in order with their t_client', async () => {
    const net = network()
    vi.setSystemTime(1767261600000)
    const tracker = make({ consent: 'pending' })
    tracker.clickItem(click('1'))
    vi.setSystemTime(1767261601000)
    tracker.clickItem(click('2'))
    vi.advanceTimersByTime(5000)
    dispatchEvent(new Event('pagehide'))
    await settle()
    expect(net.fetch).not.toHaveBeenCalled()
    expect(net.sendBeacon).not.toHaveBeenCalled()
    expect(ours()).toEqual(nothingOfOurs)
    expect(tracker.stats().queued).toBe(2)
    tracker.consent('granted')
    await settle()
    const events = net.events()
    expect(events.map((event) => [event.properties.item_id, event.t_client])).toEqual([
      ['1', 1767261600000],
      ['2', 1767261601000]
    ])
    expect(events[0].user.uid).toBe(events[1].user.uid)
    expect(document.cookie).toContain('df_uid=' + events[0].user.uid)
  })

  it('keeps at most the outbox bound in memory while waiting', () => {
    network()
    quietConsole()
    const tracker = make({ consent: 'pending', maxBatchEvents: 1e9 })
    for (let i = 0; i < 2010; i++) tracker.clickItem(click(String(i)))
    expect(tracker.stats()).toMatchObject({ queued: 2000, dropped: { overflow: 10 } })
  })
})

describe('consent: denied', () => {
  it('stores and sends nothing, while bad calls are still reported', async () => {
    const net = network()
    const onError = vi.fn()
    quietConsole()
    const tracker = make({ consent: 'denied', onError })
    tracker.clickItem(click('1'))
    tracker.clickItem({ item_id: 1 } as never)
    await tracker.flush()
    dispatchEvent(new Event('pagehide'))
    expect(net.fetch).not.toHaveBeenCalled()
    expect(net.sendBeacon).not.toHaveBeenCalled()
    expect(ours()).toEqual(nothingOfOurs)
    expect(onError).toHaveBeenCalledTimes(1)
  })

  it('on withdrawal drops the waiting events, deletes cookies and every stored outbox, and sends nothing more', async () => {
    const net = network({ answer: () => 'offline' })
    const tracker = make()
    tracker.clickItem(click('1'))
    await tracker.flush()
    await settle()
    localStorage.setItem('df_q_othertab', 'othertab')
    localStorage.setItem('df_q_othertab.0', '{"event":"click-item"}')
    localStorage.setItem('shop-cart', '[]')
    expect(document.cookie).toContain('df_uid')
    tracker.consent('denied')
    expect(ours()).toEqual({ cookies: '', storage: ['shop-cart'] })
    expect(tracker.stats().queued).toBe(0)
    tracker.clickItem(click('2'))
    vi.advanceTimersByTime(120000)
    dispatchEvent(new Event('pagehide'))
    await settle()
    expect(ours()).toEqual({ cookies: '', storage: ['shop-cart'] })
    expect(net.fetch).toHaveBeenCalledTimes(1) // the one try before the withdrawal
    expect(net.sendBeacon).not.toHaveBeenCalled()
  })

  it('reports a state it does not know', () => {
    const onError = vi.fn()
    quietConsole()
    make({ onError }).consent('yes' as never)
    expect(onError.mock.calls[0][0].message).toBe('discovery-feedback: consent: state must be one of granted, pending, denied, got an unknown name')
  })
})

describe('Global Privacy Control and Do-Not-Track', () => {
  it('treats GPC as denied, even when the page grants consent', async () => {
    ;(navigator as any).globalPrivacyControl = true
    const net = network()
    const tracker = make()
    tracker.consent('granted')
    tracker.clickItem(click('1'))
    await tracker.flush()
    expect(net.fetch).not.toHaveBeenCalled()
    expect(ours()).toEqual(nothingOfOurs)
  })

  it('sends under GPC only when the site overrides it explicitly', async () => {
    ;(navigator as any).globalPrivacyControl = true
    const net = network()
    const tracker = make({ ignoreGlobalPrivacyControl: true })
    tracker.clickItem(click('1'))
    await tracker.flush()
    expect(net.events()).toHaveLength(1)
  })

  it('honours Do-Not-Track only when asked to', async () => {
    Object.defineProperty(navigator, 'doNotTrack', { value: '1', configurable: true })
    const net = network()
    const ignoring = make()
    const respecting = make({ respectDoNotTrack: true })
    ignoring.clickItem(click('1'))
    respecting.clickItem(click('2'))
    await Promise.all([ignoring.flush(), respecting.flush()])
    expect(net.events().map((event) => event.properties.item_id)).toEqual(['1'])
  })
})

describe('storage: memory', () => {
  it('writes neither cookies nor localStorage, and still sends', async () => {
    const net = network({ answer: () => 'offline' })
    const tracker = make({ storage: 'memory' })
    tracker.clickItem(click('1'))
    await tracker.flush()
    await settle()
    expect(ours()).toEqual(nothingOfOurs)
    net.fetch.mockImplementation((_url, init) => {
      net.delivered.push({ via: 'fetch', url: '', body: init.body as string })
      return Promise.resolve(new Response(null, { status: 204 }))
    })
    dispatchEvent(new Event('online'))
    await settle()
    expect(net.events()).toHaveLength(1)
    expect(ours()).toEqual(nothingOfOurs)
  })
})

describe('identify and reset', () => {
  it('reset() sends what the last shopper did under their ids, then starts anew without email', async () => {
    const net = network()
    const tracker = make()
    tracker.identify({ email: 'first@example.com', uid: 'customer-1' })
    tracker.clickItem(click('1'))
    const cookieUid = document.cookie
    tracker.reset()
    tracker.clickItem(click('2'))
    await tracker.flush()
    const [before, after] = net.events().map((event) => event.user)
    expect(before).toMatchObject({ uid: 'customer-1', email: 'first@example.com' })
    expect(after.uid).not.toBe('customer-1')
    expect(after).not.toHaveProperty('email')
    expect(after.sid).not.toBe(before.sid)
    expect(document.cookie).not.toBe(cookieUid)
  })
})
