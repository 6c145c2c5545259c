// @vitest-environment node
import nodeResolve from '@rollup/plugin-node-resolve'
import typescript from '@rollup/plugin-typescript'
import { join } from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { rollup } from 'rollup'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { launch, leave, startCollector, startPages, STUB, watch } from '../support/harness'
import { sleep, waitFor } from '../support/wait'
import { COOKIEBOT, ONETRUST, SHOPIFY } from './banner-emulations'

let browser: Browser
let context: BrowserContext
let collector: Awaited<ReturnType<typeof startCollector>>
let pages: Awaited<ReturnType<typeof startPages>>
let adapters: string

/** The three adapters in one IIFE that puts them on `window.adapters`, as a shop's bundle would carry them. */
async function bundleAdapters() {
  const entry = join(process.cwd(), 'test/integrations/banner-entry.js')
  const dir = join(process.cwd(), 'src/integrations/consent')
  const source = ['onetrust', 'cookiebot', 'shopify-privacy'].map((name) => `export * from ${JSON.stringify(join(dir, name + '.ts'))}`).join('\n')
  const bundle = await rollup({
    input: entry,
    plugins: [
      { name: 'entry', resolveId: (id) => (id == entry ? id : null), load: (id) => (id == entry ? source : null) },
      nodeResolve({ browser: true, extensions: ['.ts', '.js'] }),
      typescript({
        declaration: false,
        noEmitOnError: false,
        include: [join(process.cwd(), 'src/**/*.ts')],
        compilerOptions: { outDir: undefined, rootDir: undefined }
      })
    ],
    onwarn: (warning) => {
      // Type errors are tsc's to report; anything else in bundling is a fault of the test.
      if (warning.plugin != 'typescript') throw new Error('bundling the adapters: ' + warning.message)
    }
  })
  const { output } = await bundle.generate({ format: 'iife', name: 'adapters' })
  await bundle.close()
  return output[0].code
}

beforeAll(async () => {
  ;[browser, collector, pages, adapters] = await Promise.all([launch(), startCollector(), startPages(), bundleAdapters()])
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

/**
 * A shop's page as the README's consent snippet has it (data-consent="pending"), with the banner's
 * script standing in for the platform's and the adapter following it through the stub.
 */
const shop = (banner: string, call: string) =>
  STUB +
  `<script async src="/discovery-feedback.min.js" data-key="KEY" data-endpoint="${collector.url}" data-auto-view-page="false" data-consent="pending"></script>` +
  `<script>${banner}</script><script>${adapters}</script>` +
  `<script>window.stopFollowing = adapters.${call}({ consent: function (state) { discoveryFeedback('consent', state) } })</script>`

const click = (page: Page, id: string) => page.evaluate((id) => (window as any).discoveryFeedback('click-item', { item_id: id, variant_item_id: id }), id)
const flush = (page: Page) => page.evaluate(() => (window as any).discoveryFeedback('flush'))
const banner = (page: Page, step: 'load' | 'accept' | 'withdraw') => page.evaluate((step) => (window as any).banner[step](), step)
/** Our cookies and localStorage entries, read from the browser itself. */
const traces = async (page: Page) => ({
  cookies: (await context.cookies()).filter((cookie) => cookie.name.startsWith('df_')).map((cookie) => cookie.name),
  storage: await page.evaluate(() => Object.keys(localStorage).filter((key) => key.startsWith('df_')))
})
const clicks = () => collector.events().map((event) => event.properties.item_id)

describe.each([
  ['OneTrust', ONETRUST, 'oneTrustConsent'],
  ['Cookiebot', COOKIEBOT, 'cookiebotConsent'],
  ['Shopify customer privacy', SHOPIFY, 'shopifyConsent']
])('%s in Chromium', (name, script, call) => {
  it('nothing sent or stored until consent; the waiting and later events after it; after withdrawal nothing sent and our traces gone', async () => {
    pages.page('/' + call, shop(script, call))
    const page = await context.newPage()
    const { pageErrors, consoleErrors } = watch(page)
    await page.goto(pages.origin + '/' + call)
    await page.waitForFunction(() => (window as any).discoveryFeedback.tracker)

    // Before the banner has loaded, then loaded with no answer yet.
    await click(page, 'before-banner')
    await banner(page, 'load')
    await click(page, 'undecided')
    await flush(page)
    await sleep(1500) // past the flush interval
    expect(collector.requests).toEqual([])
    expect(await traces(page)).toEqual({ cookies: [], storage: [] })

    await banner(page, 'accept')
    await waitFor(() => collector.events().length == 2, name + ': the waiting events', 10000)
    await click(page, 'granted')
    await flush(page)
    await waitFor(() => collector.events().length == 3, name + ': the event after consent', 10000)
    expect(clicks()).toEqual(['before-banner', 'undecided', 'granted'])
    expect((await traces(page)).cookies.sort()).toEqual(['df_sid', 'df_uid'])

    await click(page, 'queued')
    await banner(page, 'withdraw')
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
