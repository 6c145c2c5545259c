// @vitest-environment node
import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { bundleIife } from '../../support/bundle'
import { chromiumSuite, leave, STUB, watch } from '../../support/harness'
import { sleep, waitFor } from '../../support/wait'
import { COOKIEBOT, ONETRUST, SHOPIFY } from './banner-emulations'

// One browser, page server and collector for the file; a fresh context and an empty collector per test.
const suite = chromiumSuite()
let adapters: string

/** The three adapters in one IIFE that puts them on `window.adapters`, as a shop's bundle would carry them. */
const bundleAdapters = () =>
  bundleIife(['onetrust', 'cookiebot', 'shopify-privacy'].map((name) => `export * from '../../../src/integrations/consent/${name}.ts'`).join('\n'), {
    from: import.meta.url,
    name: 'adapters'
  })

beforeAll(async () => {
  adapters = await bundleAdapters()
})

/**
 * A shop's page as the README's consent snippet has it (data-consent="pending"), with the banner's
 * script standing in for the platform's and the adapter following it through the stub.
 */
const shop = (banner: string, call: string) =>
  STUB +
  `<script async src="/discovery-feedback.min.js" data-key="KEY" data-endpoint="${suite.servers.collector.url}" data-auto-view-page="false" data-consent="pending"></script>` +
  `<script>${banner}</script><script>${adapters}</script>` +
  `<script>window.stopFollowing = adapters.${call}({ consent: function (state) { discoveryFeedback('consent', state) } })</script>`

const click = (page: Page, id: string) => page.evaluate((id) => (window as any).discoveryFeedback('click-item', { item_id: id, variant_item_id: id }), id)
const flush = (page: Page) => page.evaluate(() => (window as any).discoveryFeedback('flush'))
const banner = (page: Page, step: 'load' | 'accept' | 'withdraw') => page.evaluate((step) => (window as any).banner[step](), step)
/** Our cookies and localStorage entries, read from the browser itself. */
const traces = async (page: Page) => ({
  cookies: (await suite.context.cookies()).filter((cookie) => cookie.name.startsWith('df_')).map((cookie) => cookie.name),
  storage: await page.evaluate(() => Object.keys(localStorage).filter((key) => key.startsWith('df_')))
})
const clicks = () => suite.servers.collector.events().map((event) => event.properties.item_id)

describe.each([
  ['OneTrust', ONETRUST, 'oneTrustConsent'],
  ['Cookiebot', COOKIEBOT, 'cookiebotConsent'],
  ['Shopify customer privacy', SHOPIFY, 'shopifyConsent']
])('%s in Chromium', (name, script, call) => {
  it('nothing sent or stored until consent; the waiting and later events after it; after withdrawal nothing sent and our traces gone', async () => {
    suite.servers.page('/' + call, shop(script, call))
    const page = await suite.context.newPage()
    const { pageErrors, consoleErrors } = watch(page)
    await page.goto(suite.servers.origin + '/' + call)
    await page.waitForFunction(() => (window as any).discoveryFeedback.tracker)

    // Before the banner has loaded, then loaded with no answer yet.
    await click(page, 'before-banner')
    await banner(page, 'load')
    await click(page, 'undecided')
    await flush(page)
    await sleep(1500) // past the flush interval
    expect(suite.servers.collector.requests).toEqual([])
    expect(await traces(page)).toEqual({ cookies: [], storage: [] })

    await banner(page, 'accept')
    await waitFor(() => suite.servers.collector.events().length == 2, name + ': the waiting events', 10000)
    await click(page, 'granted')
    await flush(page)
    await waitFor(() => suite.servers.collector.events().length == 3, name + ': the event after consent', 10000)
    expect(clicks()).toEqual(['before-banner', 'undecided', 'granted'])
    expect((await traces(page)).cookies.sort()).toEqual(['df_sid', 'df_uid'])

    // Tracked and withdrawn in one task, so that no batch can leave in between.
    await page.evaluate(() => {
      ;(window as any).discoveryFeedback('click-item', { item_id: 'queued', variant_item_id: 'queued' })
      ;(window as any).banner.withdraw()
    })
    expect(await traces(page)).toEqual({ cookies: [], storage: [] })
    await click(page, 'withdrawn')
    await flush(page)
    await leave(page)
    await sleep(1500)
    expect(clicks()).toEqual(['before-banner', 'undecided', 'granted'])
    expect(pageErrors).toEqual([])
    expect(consoleErrors).toEqual([])
  })
})
