import { describe, expect, it, vi } from 'vitest'
import { createOutbox, MAX_AGE, MAX_CHARS, MAX_EVENTS, type DropReason, type Entry } from '../../src/browser/outbox'
import type { Envelope } from '../../src/index'
import { OUTBOX_PREFIX } from '../../src/shared/ids'
import { fakeLocks, isolateEachTest } from '../support/helpers'

// The durable outbox as the pages of one shop share it: one localStorage for every tab and every
// reload, each page with an outbox of its own. A page here is an outbox that storage is allowed
// for, as once consent is given; a reload or a closed tab is that page going, and the next page
// adopting what it left.

isolateEachTest()

let count = 0
/** A click as the tracker queues it: tracked at `t_client`, with an id of its own. */
const click = (t_client = Date.now(), item_id = '42'): Entry => ({
  event: { event: 'click-item', properties: { item_id, variant_item_id: '1' }, key: 'KEY', t_client, user: { uid: 'u-1', sid: 's-1' }, event_id: 'e' + count++ }
})

/** A page of the shop with its outbox, the drops it reported, and the ids it holds in order. */
function page({ persist = true } = {}) {
  const drops: { ids: string[]; reason: DropReason }[] = []
  const outbox = createOutbox((entries, reason) => drops.push({ ids: entries.map((entry) => entry.event.event_id), reason }))
  outbox.setPersist(persist)
  return { outbox, drops, ids: () => outbox.entries.map((entry) => entry.event.event_id) }
}
type Page = ReturnType<typeof page>

/** Tracks each event on a page; returns their ids in the order tracked. */
const track = (on: Page, events: Entry[]) =>
  events.map((entry) => {
    on.outbox.add(entry)
    return entry.event.event_id
  })

/** The page goes (pagehide) and the next one opens and adopts what it left. */
async function reload(from: Page) {
  from.outbox.suspend()
  const next = page()
  await next.outbox.adopt()
  return next
}

describe('across reloads and tabs', () => {
  it('keeps its events across a reload: the next page adopts every one, in order, with when each was handed over', async () => {
    const first = page()
    const tracked = track(
      first,
      Array.from({ length: 40 }, (_, i) => click(Date.now() + i))
    )
    // One went out in a beacon as the page left: the next page must know it is unconfirmed.
    const beacon = first.outbox.entries[3]
    first.outbox.mark([beacon], 1767261600000)
    const next = await reload(first)
    expect(next.ids()).toEqual(tracked)
    expect(next.outbox.entries[0].event).toEqual(first.outbox.entries[0].event)
    expect(next.outbox.entries.filter((entry) => entry.handed).map((entry) => [entry.event.event_id, entry.handed])).toEqual([
      [beacon.event.event_id, 1767261600000]
    ])
    expect(next.drops).toEqual([])
  })

  it('orders what two gone tabs left by when it was tracked, not tab by tab', async () => {
    const start = Date.now()
    const [left, right] = [page(), page()]
    const [a1, a3] = track(left, [click(start + 1), click(start + 3)])
    const [b2, b4] = track(right, [click(start + 2), click(start + 4)])
    left.outbox.suspend()
    const next = await reload(right)
    expect(next.ids()).toEqual([a1, b2, a3, b4])
  })

  it('with Web Locks, leaves the events of a tab that is open and adopts them once that tab is gone', async () => {
    const locks = fakeLocks()
    const other = page()
    const tracked = track(other, [click(), click()])
    const here = page()
    expect(await here.outbox.adopt()).toBe(0)
    expect(other.ids()).toEqual(tracked)
    // The other tab crashes: no pagehide, the browser just lets its lock go.
    locks.held().forEach(locks.die)
    expect(await here.outbox.adopt()).toBe(2)
    expect(here.ids()).toEqual(tracked)
    // Adopted, they are this tab's: a third tab opened now leaves them alone.
    expect(await page().outbox.adopt()).toBe(0)
  })

  it('back from the back/forward cache, a page drops what another page adopted while it was away', async () => {
    const away = page()
    const [adopted] = track(away, [click()])
    const next = await reload(away)
    away.outbox.resume()
    expect(next.ids()).toEqual([adopted])
    expect(away.ids()).toEqual([])
  })

  it('back from the back/forward cache before any page adopted, a page keeps its events, and a page opened later leaves them alone', async () => {
    const away = page()
    const kept = track(away, [click()])
    away.outbox.suspend()
    away.outbox.resume()
    expect(await page().outbox.adopt()).toBe(0)
    expect(away.ids()).toEqual(kept)
  })
})

describe('its bounds', () => {
  it(`drops the oldest beyond ${MAX_EVENTS} events, says which, and the next page does not get them back`, async () => {
    const full = page()
    const tracked = track(
      full,
      Array.from({ length: MAX_EVENTS + 3 }, () => click())
    )
    expect(full.drops).toEqual([
      { ids: [tracked[0]], reason: 'overflow' },
      { ids: [tracked[1]], reason: 'overflow' },
      { ids: [tracked[2]], reason: 'overflow' }
    ])
    expect(full.ids()).toEqual(tracked.slice(3))
    const next = await reload(full)
    expect(next.ids()).toEqual(tracked.slice(3))
  })

  it('drops the oldest beyond 1 MiB of JSON however few the events, and counts the room that delivered events leave', () => {
    // Three events of 0.4 MiB each: the third pushes the first out.
    const big = (item_id: string) => click(Date.now(), item_id.repeat(MAX_CHARS * 0.4))
    const heavy = page()
    const tracked = track(heavy, [big('a'), big('b'), big('c')])
    expect(heavy.drops).toEqual([{ ids: [tracked[0]], reason: 'overflow' }])
    expect(heavy.ids()).toEqual(tracked.slice(1))
    // Once delivered, the two left free their room: two more fit without a drop.
    heavy.outbox.remove([...heavy.outbox.entries])
    const later = track(heavy, [big('d'), big('e')])
    expect(heavy.drops).toHaveLength(1)
    expect(heavy.ids()).toEqual(later)
  })

  it('drops, and says so, what a gone page left more than 7 days ago, and keeps an event exactly 7 days old', async () => {
    const start = 1767261600000
    const gone = page()
    const [older, newer] = track(gone, [click(start), click(start + 60000)])
    vi.setSystemTime(start + 60000 + MAX_AGE)
    const next = await reload(gone)
    expect(next.ids()).toEqual([newer])
    expect(next.drops).toEqual([{ ids: [older], reason: 'expired' }])
    // Neither is offered again to a page after it.
    expect(await page().outbox.adopt()).toBe(0)
  })
})

describe('storage that fails or is not allowed', () => {
  /** Fills the site's localStorage to its quota with the shop's own data, so the next write throws QuotaExceededError. */
  const fillStorage = () => {
    let used = 0
    for (const key of Object.keys(localStorage)) used += key.length + localStorage.getItem(key)!.length
    localStorage.setItem('shop-cache', 'x'.repeat(5e6 - used - 'shop-cache'.length))
    expect(() => localStorage.setItem('shop-probe', '1')).toThrow(/quota has been exceeded/)
  }

  it('with storage full, keeps a new event in memory without throwing, and loses none of those stored before', async () => {
    const locks = fakeLocks()
    const shop = page()
    const stored = track(shop, [click(), click()])
    fillStorage()
    const more = click()
    expect(() => shop.outbox.add(more)).not.toThrow()
    expect(() => shop.outbox.mark(shop.outbox.entries, Date.now())).not.toThrow()
    expect(shop.ids()).toEqual([...stored, more.event.event_id])
    // The tab is closed; the shop frees its cache, and the next tab gets what was stored.
    locks.held().forEach(locks.die)
    localStorage.removeItem('shop-cache')
    const next = page()
    expect(await next.outbox.adopt()).toBe(2)
    expect(next.ids()).toEqual(stored)
  })

  it('a tab that adopts while storage is full sends what it adopted, and should it go too, leaves every event for the next tab', async () => {
    const locks = fakeLocks()
    const stored = track(page(), [click(), click()])
    locks.held().forEach(locks.die)
    fillStorage()
    const adopter = page()
    expect(await adopter.outbox.adopt()).toBe(2)
    expect(adopter.ids()).toEqual(stored)
    // A second look finds nothing more: what it holds under the gone tab's keys is its own now.
    expect(await adopter.outbox.adopt()).toBe(0)
    locks.held().forEach(locks.die)
    localStorage.removeItem('shop-cache')
    const last = page()
    await last.outbox.adopt()
    expect(last.ids()).toEqual(stored)
  })

  it('where reading localStorage throws (a sandboxed frame), works from memory and throws nothing', async () => {
    vi.spyOn(window, 'localStorage', 'get').mockImplementation(() => {
      throw new DOMException('The operation is insecure.', 'SecurityError')
    })
    const framed = page()
    const tracked = track(framed, [click()])
    await expect(framed.outbox.adopt()).resolves.toBe(0)
    expect(() => framed.outbox.suspend()).not.toThrow()
    expect(() => framed.outbox.resume()).not.toThrow()
    expect(framed.ids()).toEqual(tracked)
  })

  it('stores nothing until storage is allowed, then stores what waits', async () => {
    const pending = page({ persist: false })
    const tracked = track(pending, [click(), click()])
    expect(localStorage.length).toBe(0)
    pending.outbox.setPersist(true)
    const next = await reload(pending)
    expect(next.ids()).toEqual(tracked)
  })

  it("on withdrawal forgets its events and every other tab's outbox, keeps the shop's own keys, and stores nothing after", async () => {
    localStorage.setItem('shop-cart', '[]')
    const other = page()
    track(other, [click()])
    other.outbox.suspend()
    const withdrawn = page()
    track(withdrawn, [click()])
    withdrawn.outbox.forget()
    track(withdrawn, [click()])
    expect(Object.keys(localStorage)).toEqual(['shop-cart'])
    expect(await page().outbox.adopt()).toBe(0)
  })
})

describe('its Web Lock', () => {
  it("on withdrawal lets it go with the events: a page that holds a lock stays out of Firefox's back/forward cache", async () => {
    const locks = fakeLocks()
    const withdrawn = page()
    track(withdrawn, [click()])
    expect(locks.held()).toHaveLength(1)
    withdrawn.outbox.forget()
    await Promise.resolve()
    expect(locks.held()).toEqual([])
  })
})

describe('what the page did to JSON', () => {
  it('with Array.prototype.toJSON defined (Prototype.js 1.6), the next page reads arrays back as arrays', async () => {
    const before = Object.getOwnPropertyDescriptor(Array.prototype, 'toJSON')
    // Prototype.js writes an array as its own JSON text, which JSON.stringify then nests as a string.
    Object.defineProperty(Array.prototype, 'toJSON', {
      configurable: true,
      value(this: unknown[]) {
        return '[' + this.map((item) => JSON.stringify(item)).join(', ') + ']'
      }
    })
    const lines = [{ item_id: '42', variant_item_id: '42-1', unit_price: 5, quantity: 2 }]
    const order = { event: 'purchase', properties: { order_id: 'o-1', currency: 'EUR', revenue: 10, line_items: lines } }
    try {
      const shop = page()
      shop.outbox.add({ event: { ...click().event, ...order } as Envelope })
      const next = await reload(shop)
      const [adopted] = next.outbox.entries
      expect(adopted.event.properties).toMatchObject({ line_items: lines })
      // What the next page sends is its stored text: arrays there too.
      expect(JSON.parse(adopted.wire!).properties.line_items).toEqual(lines)
    } finally {
      if (before) Object.defineProperty(Array.prototype, 'toJSON', before)
      else delete (Array.prototype as { toJSON?: unknown }).toJSON
    }
  })

  it('skips and clears what another script left under its prefix (cut short, not JSON, no event id), and adopts the rest', async () => {
    localStorage.setItem('shop-cart', '[]')
    const broken = { '.0': '{"event":"click-item","t_client":17', '.1': 'not json', '.2': '{"event":"click-item"}', '.3': 'null', '': '' }
    for (const [suffix, value] of Object.entries(broken)) localStorage.setItem(OUTBOX_PREFIX + 'gonepage0' + suffix, value)
    const gone = page()
    const tracked = track(gone, [click()])
    const next = await reload(gone)
    expect(next.ids()).toEqual(tracked)
    expect(Object.keys(localStorage).filter((key) => key.startsWith(OUTBOX_PREFIX + 'gonepage0'))).toEqual([])
    expect(localStorage.getItem('shop-cart')).toBe('[]')
  })
})
