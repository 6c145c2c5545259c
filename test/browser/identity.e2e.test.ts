// @vitest-environment node
import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { bundleIife } from '../support/bundle'
import { chromiumSuite, watch } from '../support/harness'
import { waitFor } from '../support/wait'

/*
 * The sid's rolling expiry in real Chromium, whose cookie jar behaves as a shopper's browser:
 * Max-Age is counted from the write, so only a page that writes the cookie again on every event
 * keeps the session going (jsdom counts it from every read, where any tracker would look right).
 *
 * The tracker is bundled from src/ (no build needed). The page's Date.now() answers as much
 * later as the test says, so events can be minutes apart for the tracker without the test
 * waiting for them; Chromium still counts each Max-Age from its own clock, which is why each
 * written expiry is checked against the real time around its event.
 */

const suite = chromiumSuite()
let tracker: string

beforeAll(async () => {
  tracker = await bundleIife(`export { createTracker } from '../../src/browser/tracker.ts'`, { from: import.meta.url, name: 'feedback' })
}, 60000)

const SESSION_SECONDS = 30 * 60

/** Opens a page of the shop with a tracker whose clock the test moves forward. */
async function shop(): Promise<Page> {
  suite.servers.page(
    '/shop',
    ({ collector }) =>
      `<script>window.ahead = 0; const realNow = Date.now; Date.now = () => realNow() + ahead</script>` +
      `<script>${tracker}</script>` +
      `<script>window.tracker = feedback.createTracker({ key: 'KEY', endpoint: ${JSON.stringify(collector)}, autoViewPage: false })</script>`
  )
  const page = await suite.context.newPage()
  await page.goto(suite.servers.origin + '/shop')
  return page
}

/** The sid cookie as Chromium holds it: its value and its expiry in seconds since the epoch. */
const sidCookie = async () => {
  const cookie = (await suite.context.cookies()).find((each) => each.name == 'df_sid')
  return cookie && { id: cookie.value, expires: cookie.expires }
}

describe('the sid cookie in real Chromium', () => {
  it('moves its expiry 30 minutes past every event, so a shopper active for an hour keeps one session', async () => {
    const page = await shop()
    const { pageErrors } = watch(page)
    const seen: { id: string; expires: number }[] = []
    // Events 29 minutes apart for the tracker: each within the session the one before renewed.
    for (const [index, minutesLater] of [0, 29, 29, 29].entries()) {
      await page.evaluate((minutes) => ((window as any).ahead += minutes * 60000), minutesLater)
      const before = Date.now() / 1000
      await page.evaluate((item) => (window as any).tracker.clickItem({ item_id: item, variant_item_id: 'v' }), 'item-' + index)
      // Chromium counts Max-Age from its own clock when its cookie store takes the write: to
      // the microsecond, and possibly a moment after the page's call returned, so the cookie is
      // read until it shows this event's write. That time falls between the test's readings of
      // the same clock before the call and after the read; those are cut to the millisecond, so
      // the later one may be up to 1 ms early, and 0.1 ms covers the floating point. A cookie
      // that this event did not renew was written before the event began, and never shows.
      let cookie: Awaited<ReturnType<typeof sidCookie>>
      const writtenAt = () => cookie!.expires - SESSION_SECONDS
      await waitFor(async () => !!(cookie = await sidCookie()) && writtenAt() >= before - 0.0001, 'the sid cookie renewed by event ' + index, 5000)
      expect(writtenAt()).toBeLessThanOrEqual(Date.now() / 1000 + 0.001)
      seen.push(cookie!)
    }
    // One session throughout, its expiry later after each event than after the one before.
    expect(new Set(seen.map((cookie) => cookie.id)).size).toBe(1)
    for (let index = 1; index < seen.length; index++) expect(seen[index].expires).toBeGreaterThan(seen[index - 1].expires)

    await page.evaluate(() => (window as any).tracker.flush())
    await waitFor(() => suite.servers.collector.events().length == 4, 'the four clicks at the collector', 10000)
    expect(new Set(suite.servers.collector.events().map((event) => event.user.sid))).toEqual(new Set([seen[0].id]))
    expect(pageErrors).toEqual([])
  })
})
