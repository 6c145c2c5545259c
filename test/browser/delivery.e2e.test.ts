// @vitest-environment node
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ids, launch, leave, startDemoCollector, startPages, STUB, watch } from '../support/harness'
import { sleep, waitFor } from '../support/wait'

// Each scenario asserts the exact set of click-items the demo collector stored: nothing
// missing, nothing twice.

let browser: Browser
let context: BrowserContext
let collector: Awaited<ReturnType<typeof startDemoCollector>>
let pages: Awaited<ReturnType<typeof startPages>>

const shop = (extra = '', attributes = 'data-auto-view-page="false"') =>
  STUB +
  extra +
  `<script async src="/discovery-feedback.min.js" data-key="KEY" data-endpoint="${collector.url}" ${attributes}></script>` +
  `<script>window.clicks = (prefix, count) => { for (let i = 0; i < count; i++) discoveryFeedback('click-item', { item_id: prefix + '-' + i, variant_item_id: 'v' }) }</script>` +
  '<a id="away" href="ELSEWHERE">leave</a>'

const open = async (path: string) => {
  const page = await context.newPage()
  await page.goto(pages.origin + path)
  await page.waitForFunction(() => (window as any).discoveryFeedback.tracker)
  return page
}
const clicks = (page: Page, prefix: string, count: number) => page.evaluate(([p, n]) => (window as any).clicks(p, n), [prefix, count] as const)
const expectStored = async (expected: string[], timeout = 10000) => {
  await waitFor(() => collector.clicks().length >= expected.length, expected.length + ' stored click-items', timeout).catch(() => {})
  await sleep(300)
  expect(collector.clicks()).toEqual(expected)
  const eventIds = collector.stored().map((event) => event.event_id)
  expect(new Set(eventIds).size).toBe(eventIds.length)
}

beforeAll(async () => {
  ;[browser, pages] = await Promise.all([launch(), startPages()])
})
afterAll(async () => {
  await browser?.close()
  await pages?.close()
})
beforeEach(async () => {
  collector = await startDemoCollector()
  context = await browser.newContext()
  // "Another site": same machine, other origin.
  const elsewhere = pages.origin.replace('localhost', '127.0.0.1') + '/elsewhere'
  pages.page('/elsewhere', '<h1>another site</h1>')
  pages.page('/shop', shop().replace('ELSEWHERE', elsewhere))
})
afterEach(async () => {
  await context.close()
  await collector.close()
})

describe('delivery in Chromium', () => {
  it('1a. 20 events, then at once another site', async () => {
    const page = await open('/shop')
    await clicks(page, 'nav', 20)
    await page.goto(pages.origin.replace('localhost', '127.0.0.1') + '/elsewhere')
    await expectStored(ids('nav', 20))
  })

  it('1b. 20 events, then a link click that leaves', async () => {
    const page = await open('/shop')
    await page.evaluate(() => {
      ;(window as any).clicks('link', 20)
      document.getElementById('away')!.click()
    })
    await page.waitForURL(/elsewhere/)
    await expectStored(ids('link', 20))
  })

  it('2. a 1,000-event burst before leaving', async () => {
    const page = await open('/shop')
    await clicks(page, 'burst', 1000)
    await leave(page)
    await expectStored(ids('burst', 1000))
  })

  it('3. no sendBeacon, collector answering 503 for 10 s: delivered in backoff, once', async () => {
    await context.addInitScript(() => delete (Navigator.prototype as any).sendBeacon)
    collector.set(503)
    const page = await open('/shop')
    expect(await page.evaluate(() => 'sendBeacon' in navigator)).toBe(false)
    await clicks(page, 'retry', 30)
    await sleep(10000)
    const triedWhileDown = collector.posts()
    collector.set('up')
    // The next try may be up to 16 s away: 1, 2, 4, 8, then 16 s at the most, with jitter.
    await expectStored(ids('retry', 30), 30000)
    // Backoff: a handful of tries in 10 s, not one per tick.
    expect(triedWhileDown).toBeGreaterThan(1)
    expect(triedWhileDown).toBeLessThan(8)
    const stats = await page.evaluate(() => (window as any).discoveryFeedback.tracker.stats())
    expect(stats).toMatchObject({ queued: 0, sent: 30 })
    expect(stats.retried).toBeGreaterThan(0)
  }, 60000)

  it('4. collector down for 3 pages, back on the 4th', async () => {
    collector.set('down')
    const page = await open('/shop')
    for (const step of ['one', 'two', 'three']) {
      await clicks(page, step, 5)
      await sleep(200)
      await page.goto(pages.origin + '/shop?next=' + step)
      await page.waitForFunction(() => (window as any).discoveryFeedback.tracker)
    }
    expect(collector.stored()).toEqual([])
    collector.set('up')
    await clicks(page, 'four', 5)
    await expectStored([...ids('one', 5), ...ids('two', 5), ...ids('three', 5), ...ids('four', 5)].sort())
  })

  it('5. offline, then online', async () => {
    const page = await open('/shop')
    await context.setOffline(true)
    await clicks(page, 'offline', 10)
    await sleep(1500)
    expect(collector.stored()).toEqual([])
    await context.setOffline(false)
    await expectStored(ids('offline', 10))
  })

  it('6. localStorage throwing on every write: delivered from memory', async () => {
    await context.addInitScript(() => {
      Storage.prototype.setItem = () => {
        throw new DOMException('The quota has been exceeded.', 'QuotaExceededError')
      }
    })
    const page = await open('/shop')
    const seen = watch(page)
    await clicks(page, 'memory', 25)
    await leave(page)
    await expectStored(ids('memory', 25))
    expect(seen.pageErrors).toEqual([])
  })

  it('7. two tabs sending, one closed mid-flight', async () => {
    const [first, second] = await Promise.all([open('/shop'), open('/shop')])
    await Promise.all([clicks(first, 'first', 40), clicks(second, 'second', 40)])
    await first.close()
    await clicks(second, 'later', 10)
    await expectStored([...ids('first', 40), ...ids('second', 40), ...ids('later', 10)].sort())
  })

  it('8. restored from the back/forward cache: a new view-page, and it keeps working', async () => {
    pages.page('/bf', shop('', ''))
    pages.page('/next', '<h1>next</h1>')
    const page = await open('/bf')
    await page.evaluate(() => addEventListener('pageshow', (event) => ((window as any).persisted = event.persisted)))
    await sleep(100)
    await page.goto(pages.origin + '/next')
    await page.goBack({ waitUntil: 'commit' })
    await page.waitForFunction(() => (window as any).persisted === true)
    await clicks(page, 'restored', 3)
    await leave(page)
    await expectStored(ids('restored', 3))
    expect(collector.stored().filter((event) => event.event == 'view-page')).toHaveLength(2)
  })

  it('9. a crashed page: the next visit sends what it had queued', async () => {
    // A minute's interval: however slow the crash comes, the batch is still waiting.
    pages.page('/crash', shop('', 'data-auto-view-page="false" data-flush-interval="60000"'))
    const page = await open('/crash')
    await clicks(page, 'crash', 15)
    // Stored on disk, not yet sent: the batch waits out its interval.
    const session = await context.newCDPSession(page)
    const crashed = page.waitForEvent('crash')
    session.send('Page.crash').catch(() => {})
    await crashed
    expect(collector.stored()).toEqual([])
    await open('/shop?again')
    await expectStored(ids('crash', 15))
  })

  it('corrects a device clock that is an hour slow', async () => {
    await context.addInitScript(() => {
      const now = Date.now
      Date.now = () => now() - 3600000
    })
    const page = await open('/shop')
    await clicks(page, 'clock', 1)
    await page.evaluate(() => (window as any).discoveryFeedback('flush'))
    await expectStored(ids('clock', 1))
    const [event] = collector.stored() as any[]
    expect(Date.now() - event.t_client).toBeGreaterThan(3590000)
    expect(Math.abs(event.received_at - event.t_corrected)).toBeLessThan(5000)
  })
})
