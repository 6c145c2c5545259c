// @vitest-environment node
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { identityCookie } from '../../src/server'
import { launch, leave, startCollector, startPages, STUB } from '../support/harness'
import { sleep, waitFor } from '../support/wait'

let browser: Browser
let context: BrowserContext
let collector: Awaited<ReturnType<typeof startCollector>>
let pages: Awaited<ReturnType<typeof startPages>>

const shop = (attributes = '') =>
  STUB + `<script async src="/discovery-feedback.min.js" data-key="KEY" data-endpoint="${collector.url}" data-auto-view-page="false" ${attributes}></script>`

beforeAll(async () => {
  ;[browser, collector, pages] = await Promise.all([launch(), startCollector(), startPages()])
})
afterAll(async () => {
  await browser?.close()
  await Promise.all([collector?.close(), pages?.close()])
})
beforeEach(async () => {
  collector.clear()
  context = await browser.newContext()
})
afterEach(async () => {
  await context.close()
})

const open = async (path: string) => {
  const page = await context.newPage()
  await page.goto(pages.origin + path)
  await page.waitForFunction(() => (window as any).discoveryFeedback.tracker)
  return page
}
const call = (page: Page, ...args: unknown[]) => page.evaluate((args) => (window as any).discoveryFeedback(...args), args)
/** Our cookies and localStorage entries, read from the browser itself. */
const traces = async (page: Page) => ({
  cookies: (await context.cookies()).filter((cookie) => cookie.name.startsWith('df_')).map((cookie) => cookie.name),
  storage: await page.evaluate(() => Object.keys(localStorage).filter((key) => key.startsWith('df_')))
})

describe('consent in Chromium', () => {
  it('pending: no request, no cookie, no storage until consent; then the waiting events in order, with their t_client', async () => {
    pages.page('/pending', shop('data-consent="pending"'))
    const page = await open('/pending')
    // The clock before and after each call: its event must carry a time between the two.
    const times: [number, number][] = []
    for (const id of ['1', '2', '3']) {
      times.push(
        await page.evaluate((id) => {
          const before = Date.now()
          ;(window as any).discoveryFeedback('click-item', { item_id: id, variant_item_id: id })
          return [before, Date.now()] as [number, number]
        }, id)
      )
      await sleep(20)
    }
    await sleep(1500) // past the flush interval
    await page.evaluate(() => document.dispatchEvent(new Event('visibilitychange')))
    expect(collector.requests).toEqual([])
    expect(await traces(page)).toEqual({ cookies: [], storage: [] })
    const grantedAt = await page.evaluate(() => Date.now())
    await call(page, 'consent', 'granted')
    await waitFor(() => collector.events().length == 3, 'the three waiting events', 10000)
    const events = collector.events()
    expect(events.map((event) => event.properties.item_id)).toEqual(['1', '2', '3'])
    events.forEach((event, i) => {
      expect(event.t_client).toBeGreaterThanOrEqual(times[i][0])
      expect(event.t_client).toBeLessThanOrEqual(times[i][1])
    })
    expect(grantedAt - events[2].t_client).toBeGreaterThan(1400)
    expect((await traces(page)).cookies.sort()).toEqual(['df_sid', 'df_uid'])
  })

  it('denied after granted: our cookies and outbox are gone, nothing is sent afterwards', async () => {
    pages.page('/withdraw', shop())
    const page = await open('/withdraw')
    await call(page, 'click-item', { item_id: 'before', variant_item_id: 'v' })
    await call(page, 'flush')
    await waitFor(() => collector.events().length == 1, 'the event before withdrawal', 10000)
    // Tracked, read back and withdrawn in one task, so that no batch can leave in between.
    const storedBeforeDenial = await page.evaluate(() => {
      const discoveryFeedback = (window as any).discoveryFeedback
      discoveryFeedback('click-item', { item_id: 'queued', variant_item_id: 'v' })
      const stored = Object.keys(localStorage).filter((key) => key.startsWith('df_'))
      discoveryFeedback('consent', 'denied')
      return stored
    })
    // The queued event was on disk, under a key of its own.
    expect(storedBeforeDenial.filter((key) => key.includes('.'))).toHaveLength(1)
    expect(await traces(page)).toEqual({ cookies: [], storage: [] })
    await call(page, 'click-item', { item_id: 'after', variant_item_id: 'v' })
    await leave(page)
    await sleep(1500)
    expect(collector.events().map((event) => event.properties.item_id)).toEqual(['before'])
  })

  it('Global Privacy Control: nothing is sent, nothing stored', async () => {
    await context.addInitScript(() => Object.defineProperty(Navigator.prototype, 'globalPrivacyControl', { get: () => true }))
    pages.page('/gpc', shop('data-auto-view-page="true"'))
    const page = await open('/gpc')
    await call(page, 'consent', 'granted')
    await call(page, 'click-item', { item_id: '1', variant_item_id: '1' })
    await call(page, 'flush')
    const found = await traces(page)
    await leave(page)
    await sleep(1500)
    expect(collector.requests).toEqual([])
    expect(found).toEqual({ cookies: [], storage: [] })
  })

  it('reset() on logout: the next events carry a new uid', async () => {
    pages.page('/logout', shop())
    const page = await open('/logout')
    await call(page, 'user', { email: 'first@example.com' })
    await call(page, 'click-item', { item_id: 'first', variant_item_id: 'v' })
    await call(page, 'reset')
    await call(page, 'click-item', { item_id: 'second', variant_item_id: 'v' })
    await leave(page)
    await waitFor(() => collector.events().length == 2, 'both clicks', 10000)
    const [first, second] = collector.events()
    expect(first.user.email).toBe('first@example.com')
    expect(second.user.uid).not.toBe(first.user.uid)
    expect(second.user).not.toHaveProperty('email')
  })

  it("reads the uid the shop's server set with identityCookie() as its own", async () => {
    let given = ''
    pages.page('/server-cookie', shop(), (request) => {
      const { uid, setCookie } = identityCookie(request.headers.cookie, { secure: false })
      given = uid
      return { 'set-cookie': setCookie }
    })
    const page = await open('/server-cookie')
    await call(page, 'click-item', { item_id: '1', variant_item_id: '1' })
    await leave(page)
    await waitFor(() => collector.events().length == 1, 'the click', 10000)
    expect(given).toMatch(/^[\w-]{21}$/)
    expect(collector.events()[0].user.uid).toBe(given)
    // The next visit keeps it: the server renews what the browser sends back.
    const again = await open('/server-cookie')
    expect((await context.cookies()).find((cookie) => cookie.name == 'df_uid')!.value).toBe(given)
    await again.close()
  })
})
