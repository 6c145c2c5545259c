// @vitest-environment node
import { existsSync, mkdtempSync, readFileSync, symlinkSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { extname, join } from 'node:path'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launch, leave, startCollector, watch } from '../support/harness'
import { waitFor } from '../support/wait'

/*
 * README's Vite + React Router recipe, built by Vite as a shop would build it (the package
 * installed by its name, production mode) and served with the usual single-page fallback:
 * the page views of a router's link and back navigations, in Chromium.
 */
const root = process.cwd()
const frameworks = join(root, 'test/frameworks')
let browser: Browser
let collector: Awaited<ReturnType<typeof startCollector>>
let server: ReturnType<typeof createServer>
let origin: string

beforeAll(async () => {
  collector = await startCollector()
  // npm ci --prefix test/frameworks (npm test does it) installs the frameworks; the package
  // itself is linked under its name, as npm would install it.
  if (!existsSync(join(frameworks, 'node_modules/vite')))
    throw new Error('test/frameworks is not installed: npm ci --prefix test/frameworks (npm test does it)')
  const linked = join(frameworks, 'node_modules/discovery-feedback')
  if (!existsSync(linked)) symlinkSync(root, linked, 'dir')
  const { build } = await import(join(frameworks, 'node_modules/vite/dist/node/index.js'))
  const out = mkdtempSync(join(tmpdir(), 'react-router-'))
  await build({
    root: join(frameworks, 'react-router'),
    configFile: false,
    logLevel: 'error',
    mode: 'production',
    build: { outDir: out, emptyOutDir: true },
    define: { 'import.meta.env.VITE_FEEDBACK_ENDPOINT': JSON.stringify(collector.url) }
  })
  const TYPES: Record<string, string> = { '.js': 'text/javascript', '.html': 'text/html; charset=utf-8' }
  server = createServer((request, response) => {
    const path = new URL(request.url!, 'http://x').pathname
    const file = path.startsWith('/assets/') && existsSync(join(out, path)) ? join(out, path) : join(out, 'index.html')
    response.writeHead(200, { 'content-type': TYPES[extname(file)] || 'application/octet-stream' }).end(readFileSync(file))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  origin = 'http://127.0.0.1:' + (server.address() as AddressInfo).port
  browser = await launch()
}, 60000)

afterAll(async () => {
  await browser?.close()
  await collector?.close()
  server?.close()
})

describe('Vite + React Router, in Chromium', () => {
  it('one view-page per navigation, links and back alike, each with the previous URL as ref', async () => {
    const page = await browser.newPage()
    const seen = watch(page)
    await page.goto(origin + '/')
    await page.click('text=Shoe')
    await page.waitForURL(/\/products\/shoe$/)
    await page.click('button:has-text("track a click")')
    await page.click('text=Cap')
    await page.waitForURL(/\/products\/cap$/)
    await page.goBack()
    await page.waitForURL(/\/products\/shoe$/)
    await page.click('text=Home')
    await page.waitForURL(origin + '/')
    await leave(page)
    const views = () => collector.events().filter((event) => event.event == 'view-page')
    await waitFor(() => views().length >= 5 && collector.events().some((event) => event.event == 'click-item'), 'the walk', 10000)
    const path = (url: string) => (url ? new URL(url).pathname : '')
    expect(views().map((view: any) => [path(view.properties.url), path(view.properties.ref)])).toEqual([
      ['/', ''],
      ['/products/shoe', '/'],
      ['/products/cap', '/products/shoe'],
      ['/products/shoe', '/products/cap'],
      ['/', '/products/shoe']
    ])
    // The click of the product page, tracked once.
    expect(collector.events().filter((event) => event.event == 'click-item')).toHaveLength(1)
    expect(seen.pageErrors).toEqual([])
    await page.close()
  })
})
