// @vitest-environment node
import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { chromiumSuite, IMPORT_MAP, watch, whenQuiet } from '../support/harness'
import { waitFor } from '../support/wait'

// The byte count of the script tag against what real Chromium puts on the wire: events right at
// the 60 KiB body limit in ASCII and multi-byte text, and pages that change the built-ins the
// count and flush() rely on.

const suite = chromiumSuite()
const MAX_BODY = 61440

/** A page with a tracker that sends only on flush(), after `before` (a page's own script) ran. */
const open = async (before = '') => {
  suite.servers.page(
    '/shop',
    before +
      IMPORT_MAP +
      `<script type="module">import { createTracker } from 'discovery-feedback'
       window.tracker = createTracker({ key: 'KEY', endpoint: '{{collector}}', autoViewPage: false, flushInterval: 600000, maxBatchEvents: 1000 })</script>`
  )
  const page = await suite.context.newPage()
  const seen = watch(page)
  await page.goto(suite.servers.origin + '/shop')
  await page.waitForFunction(() => 'tracker' in window)
  return { page, seen }
}

const track = (page: Page, itemIds: string[]) =>
  page.evaluate((itemIds) => {
    const tracker = (window as any).tracker
    for (const item_id of itemIds) tracker.clickItem({ item_id, variant_item_id: 'v' })
    return tracker.flush()
  }, itemIds)

const stats = (page: Page) => page.evaluate(() => (window as any).tracker.stats())
const posts = () => suite.servers.posts()

/** The wire bytes of an event's JSON whose item_id is 'x': everything but the item id's one byte. */
const overheadOf = async (page: Page) => {
  await track(page, ['x'])
  await waitFor(() => posts().length == 1, 'the probe event')
  const overhead = posts()[0].bytes - 2 - 1
  suite.servers.collector.clear()
  return overhead
}

/** An item id whose JSON text takes `bytes` bytes without its quotes: ASCII, then `unit` as often as fits. */
const itemIdOf = (bytes: number, unit: string) => {
  const unitBytes = Buffer.byteLength(JSON.stringify(unit)) - 2
  const units = Math.floor((bytes - 8) / unitBytes)
  const text = 'a'.repeat(bytes - units * unitBytes) + unit.repeat(units)
  expect(Buffer.byteLength(JSON.stringify(text)) - 2).toBe(bytes)
  return text
}

// ASCII; two, three and four bytes in UTF-8; and a lone surrogate half, which JSON.stringify
// writes as a six-character escape.
const UNITS = ['a', 'ü', '€', '👟', '\ud83d']

describe('the 60 KiB body limit in Chromium', () => {
  it('sends an event whose body is exactly 60 KiB and refuses one a byte larger, in ASCII and multi-byte text', async () => {
    const { page, seen } = await open()
    const overhead = await overheadOf(page)
    // Body = '[' + JSON + ']': the JSON at the limit takes MAX_BODY - 2 bytes.
    const fits = UNITS.map((unit) => itemIdOf(MAX_BODY - 2 - overhead, unit))
    const over = UNITS.map((unit) => itemIdOf(MAX_BODY - 1 - overhead, unit))
    await track(page, [...over, ...fits])
    await waitFor(() => posts().length >= UNITS.length, 'the events at the limit')
    await whenQuiet(() => posts().length)
    expect(posts().map((post) => post.bytes)).toEqual(UNITS.map(() => MAX_BODY))
    // The five requests are in flight together and may arrive in any order. A lone surrogate half
    // arrives as the collector parses its escape: the same text.
    const arrived = suite.servers.collector.events().map((event) => (event.properties as { item_id: string }).item_id)
    expect(arrived.sort()).toEqual([...fits].sort())
    expect(await stats(page)).toMatchObject({ queued: 0, sent: UNITS.length + 1, dropped: { too_large: UNITS.length } })
    expect(seen.pageErrors).toEqual([])
  })

  it('packs multi-byte events by their bytes: no body over 60 KiB, every event once', async () => {
    const { page, seen } = await open()
    // 40 events of about 6 KB each, 2,000 characters: by characters they would fit in two bodies.
    const itemIds = Array.from({ length: 40 }, (_, i) => i + '-' + '€'.repeat(2000))
    await track(page, itemIds)
    await waitFor(() => suite.servers.collector.events().length == 40, 'forty events')
    await whenQuiet(() => posts().length)
    expect(Math.max(...posts().map((post) => post.bytes))).toBeLessThanOrEqual(MAX_BODY)
    expect(suite.servers.collector.received().length).toBe(40)
    expect(seen.pageErrors).toEqual([])
  })
})

describe('pages that change the built-ins the byte count uses', () => {
  // A page whose RegExp test (or exec, which test calls: ECMA-262 RegExpExec) is replaced with
  // one that finds nothing. The count then takes every event for ASCII, and counts 75,000
  // bytes of '€' as 25,000.
  for (const [name, patch] of [
    ['RegExp.prototype.test', 'RegExp.prototype.test = function () { return false }'],
    ['RegExp.prototype.exec', 'RegExp.prototype.exec = function () { return null }']
  ]) {
    it(`refuses an event over 60 KiB of multi-byte text, and sends the next, on a page that replaced ${name}`, async () => {
      const { page, seen } = await open(`<script>${patch}</script>`)
      await track(page, ['€'.repeat(25000)])
      await track(page, ['next'])
      // Time for the backoff's first retry, had the first request failed.
      await page.waitForTimeout(2500)
      await track(page, [])
      await whenQuiet(() => posts().length)
      expect(posts().every((post) => post.bytes <= MAX_BODY)).toBe(true)
      expect(suite.servers.collector.events().map((event) => (event.properties as { item_id: string }).item_id)).toEqual(['next'])
      expect(await stats(page)).toMatchObject({ queued: 0, dropped: { too_large: 1 } })
      expect(seen.pageErrors).toEqual([])
    })
  }
})

describe('flush() from the guarded methods', () => {
  // reset() and destroy() call flush() inside their guard, and ignore its promise: a throw of
  // delivery's flush (here a page that replaced Promise with something that throws) must be
  // reported by the guard, not left as an unhandled rejection on the shop's console and in its
  // error monitoring.
  for (const method of ['reset', 'destroy']) {
    it(`${method}() leaves no unhandled rejection when delivery's flush throws`, async () => {
      const { page, seen } = await open()
      await page.evaluate((method) => {
        ;(window as any).Promise = function () {
          throw new TypeError('this page has its own Promise')
        }
        ;(window as any).tracker[method]()
      }, method)
      await page.waitForTimeout(300)
      expect(seen.pageErrors).toEqual([])
    })
  }
})

describe('re-entrant calls from the page', () => {
  it('sends every event once when wrapped storage and fetch call flush(), consent() and destroy() from inside', async () => {
    const { page, seen } = await open(`<script>
      var setItem = Storage.prototype.setItem
      Storage.prototype.setItem = function (key, value) { if (window.tracker) window.tracker.flush(); return setItem.call(this, key, value) }
      var removeItem = Storage.prototype.removeItem
      Storage.prototype.removeItem = function (key) { if (window.tracker) window.tracker.consent('granted'); return removeItem.call(this, key) }
      var fetchOf = window.fetch, calls = 0
      window.fetch = function (url, init) { if (++calls == 3) window.tracker.flush(); return fetchOf.call(window, url, init) }
    </script>`)
    await track(
      page,
      Array.from({ length: 30 }, (_, i) => 'e' + i + '-' + 'ü'.repeat(i * 300))
    )
    await page.evaluate(() => (window as any).tracker.flush())
    await waitFor(() => suite.servers.collector.events().length == 30, 'thirty events')
    await page.evaluate(() => (window as any).tracker.destroy())
    await whenQuiet(() => posts().length)
    expect(suite.servers.collector.received().length).toBe(30)
    expect(seen.pageErrors).toEqual([])
  })
})
