// @vitest-environment node
import { describe, expect, it } from 'vitest'
import { chromiumSuite, STUB, whenQuiet } from '../support/harness'
import { waitFor } from '../support/wait'

// Pages a shopper leaves at once, and a device whose clock is years off: the page's view and
// the shopper's uid must survive both. Real Chromium, the built script tag, a collector on
// another origin.

const suite = chromiumSuite()

const views = () => suite.servers.collector.events().filter((event) => event.event == 'view-page')

describe('a page left within its first task', () => {
  it('sends its view-page, 50 loads out of 50, whichever way the shopper leaves', async () => {
    // The script tag runs synchronously; the page then leaves before the tracker's deferred
    // view (one task later) could run: by a script navigating in the same task, or by the
    // frame holding it being removed, which fires pagehide at once.
    suite.servers.page(
      '/redirect',
      STUB + `<script src="/discovery-feedback.min.js" data-key="KEY" data-endpoint="{{collector}}"></script>` + `<script>location.replace('/landed')</script>`
    )
    suite.servers.page('/landed', '<h1>landed</h1>')
    suite.servers.page(
      '/framed',
      STUB + `<script src="/discovery-feedback.min.js" data-key="KEY" data-endpoint="{{collector}}"></script>` + `<script>frameElement.remove()</script>`
    )
    suite.servers.page('/host', '<h1>host</h1>')
    const page = await suite.context.newPage()
    const loads = 50
    for (let i = 0; i < loads / 2; i++) {
      await page.goto(suite.servers.origin + '/redirect?n=' + i)
      await page.waitForURL('**/landed')
    }
    await page.goto(suite.servers.origin + '/host')
    for (let i = 0; i < loads / 2; i++) {
      await page.evaluate(
        (src) =>
          new Promise<void>((resolve) => {
            const frame = document.createElement('iframe')
            frame.src = src
            // Removed by its own script: the frame's pagehide fires while that script runs.
            new MutationObserver((_, observer) => {
              if (!frame.isConnected) {
                observer.disconnect()
                resolve()
              }
            }).observe(document.body, { childList: true })
            document.body.append(frame)
          }),
        '/framed?n=' + i
      )
    }
    await page.goto('about:blank')
    await waitFor(() => views().length >= loads, loads + ' view-pages', 20000).catch(() => {})
    await whenQuiet(() => suite.servers.collector.requests.length)
    const urls = views().map((event) => new URL(event.properties.url as string).pathname + new URL(event.properties.url as string).search)
    const expected = [...Array.from({ length: loads / 2 }, (_, i) => '/redirect?n=' + i), ...Array.from({ length: loads / 2 }, (_, i) => '/framed?n=' + i)]
    expect({ missing: expected.filter((url) => !urls.includes(url)), twice: urls.filter((url, i) => urls.indexOf(url) != i) }).toEqual({
      missing: [],
      twice: []
    })
  })
})

describe('a device clock set ten years behind', () => {
  it('keeps one uid and one sid across three pages', async () => {
    const TEN_YEARS = 10 * 365 * 864e5
    // Before the library: every Date.now() of the page answers a decade early, as a device
    // whose clock is wrong would.
    suite.servers.page(
      '/behind',
      `<script>const now = Date.now; Date.now = () => now() - ${TEN_YEARS}</script>` +
        STUB +
        `<script src="/discovery-feedback.min.js" data-key="KEY" data-endpoint="{{collector}}" data-auto-view-page="false"></script>` +
        `<script>discoveryFeedback('click-item', { item_id: location.search.slice(3), variant_item_id: 'v' })</script>`
    )
    const page = await suite.context.newPage()
    for (const n of ['1', '2', '3']) await page.goto(suite.servers.origin + '/behind?n=' + n)
    await page.goto('about:blank')
    await waitFor(() => suite.servers.collector.events().length >= 3, 'three clicks', 10000)
    await whenQuiet(() => suite.servers.collector.requests.length)
    const clicks = suite.servers.collector.events()
    expect(clicks.map((event) => event.properties.item_id).sort()).toEqual(['1', '2', '3'])
    expect(new Set(clicks.map((event) => event.user.uid)).size).toBe(1)
    expect(new Set(clicks.map((event) => event.user.sid)).size).toBe(1)
    // The browser kept them: Max-Age does not depend on the device's date.
    const cookies = (await suite.context.cookies()).filter((cookie) => cookie.name.startsWith('df_')).map((cookie) => cookie.name)
    expect(cookies.sort()).toEqual(['df_sid', 'df_uid'])
  })
})
