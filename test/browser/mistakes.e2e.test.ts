// @vitest-environment node
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromiumSuite, startDemoCollector, STUB } from '../support/harness'
import { sleep, waitFor } from '../support/wait'

// A newcomer's mistakes on a real page in Chromium: each says what is wrong in the console,
// naming what to fix, and a page without mistakes hears nothing.

const suite = chromiumSuite()

// The reference collector, which takes the key KEY only and refuses others in SPEC's error shape.
let collector: Awaited<ReturnType<typeof startDemoCollector>>
beforeAll(async () => {
  collector = await startDemoCollector()
})
afterAll(async () => {
  await collector?.close()
})

/**
 * Opens a page whose body is `html`, and collects every console message as `type: text`, and
 * its uncaught errors. `ours`: only the messages of discovery-feedback, without the browser's
 * own (Chromium logs every refused request, "Failed to load resource").
 */
async function open(html: string, ours = false) {
  const path = '/mistake-' + Math.random().toString(36).slice(2)
  suite.servers.page(path, html)
  const page = await suite.context.newPage()
  const messages: string[] = []
  page.on('console', (message) => {
    if (!ours || message.text().startsWith('discovery-feedback')) messages.push(message.type() + ': ' + message.text())
  })
  page.on('pageerror', (error) => messages.push('pageerror: ' + error.message))
  await page.goto(suite.servers.origin + path)
  return { page, messages }
}

const tag = (attributes: string) => STUB + `<script async src="/discovery-feedback.min.js" ${attributes}></script>`
const ready = (page: Page) => page.waitForFunction('discoveryFeedback.tracker')

describe('mistakes on the script tag, in Chromium', () => {
  it('says nothing for a correct tag with every kind of option, nor for another script’s attributes on it', async () => {
    const { page, messages } = await open(
      tag(
        'data-key="KEY" data-endpoint="{{collector}}" data-session-minutes="60" data-auto-view-page="false" data-flush-interval="500" ' +
          'data-cookie-same-site="Strict" data-hash-routing="true" data-consent="pending" data-cfasync="false" data-cookieconsent="ignore"'
      )
    )
    await ready(page)
    await page.evaluate(() => (window as any).discoveryFeedback('click-item', { item_id: '42', variant_item_id: '421' }))
    // Past the moment a page without a tracker would hear of it.
    await sleep(3500)
    expect(messages).toEqual([])
  })

  it('tells a page without data-key, within 5 seconds, that nothing is tracked and why', async () => {
    const { page, messages } = await open(
      tag('data-endpoint="{{collector}}"') + `<script>discoveryFeedback('click-item', { item_id: '42', variant_item_id: '421' })</script>`
    )
    const started = Date.now()
    await waitFor(() => messages.some((message) => message.includes('data-key')), 'a message naming data-key', 5000)
    expect(Date.now() - started).toBeLessThan(5000)
    expect(messages).toEqual(['warning: discovery-feedback: no data-key: nothing is tracked'])
    expect(await page.evaluate('discoveryFeedback.tracker')).toBeUndefined()
  })

  it('says nothing of a missing data-key when the page calls init itself', async () => {
    const { page, messages } = await open(
      tag('') + `<script>discoveryFeedback('init', { key: 'KEY', endpoint: ${JSON.stringify(suite.servers.collector.url)}, autoViewPage: false })</script>`
    )
    await ready(page)
    await sleep(3500)
    expect(messages).toEqual([])
  })

  it("puts the collector's own words into the message of events a wrong key got refused", async () => {
    const { messages } = await open(
      tag(`data-key="WRONG" data-endpoint="${collector.url}" data-auto-view-page="false"`) +
        `<script>discoveryFeedback('click-item', { item_id: '42', variant_item_id: '421' })</script>`,
      true
    )
    await waitFor(() => messages.some((message) => message.includes('dropped')), 'the drop message', 10000)
    expect(messages).toEqual(['error: discovery-feedback: click-item: event dropped: refused, the collector answered 403: The API key is not valid.'])
    expect(collector.stored()).toEqual([])
  })
})
