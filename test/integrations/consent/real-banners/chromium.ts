import { chromium } from 'playwright-core'
import type { Engine, EnginePage } from '../../../support/engines'
import { CHROMIUM_ARGS } from '../../../support/harness'
import { waitFor } from '../../../support/wait'

/*
 * Chromium as engines.ts drives it, with one flag more: vanilla-cookieconsent hides itself from
 * automated browsers (its hideFromBots, on by default, reads navigator.webdriver), and
 * --disable-blink-features=AutomationControlled leaves navigator.webdriver false, as in a
 * shopper's browser. Each page gets a new context: no cookies or storage of earlier pages.
 */
export async function launchChromiumAsShopper(): Promise<Engine> {
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [...CHROMIUM_ARGS, '--disable-blink-features=AutomationControlled'],
    ignoreDefaultArgs: ['--disable-back-forward-cache']
  })
  const contexts = new Set<Awaited<ReturnType<typeof browser.newContext>>>()
  return {
    name: 'chromium',
    async newPage(): Promise<EnginePage> {
      const context = await browser.newContext()
      contexts.add(context)
      const page = await context.newPage()
      const pageErrors: string[] = []
      page.on('pageerror', (error) => pageErrors.push(error.message))
      // As in engines.ts: the value comes back through JSON, undefined staying undefined.
      const evaluate = async <T>(expression: string) => {
        const json = await page.evaluate(`(async () => (\n${expression}\n))().then((value) => JSON.stringify(value))`)
        return (typeof json == 'string' ? JSON.parse(json) : undefined) as T
      }
      return {
        pageErrors,
        goto: async (url) => void (await page.goto(url, { waitUntil: 'load' })),
        evaluate,
        // An evaluation that fails while the page navigates (a banner's reload) counts as not yet.
        waitForFunction: (expression, timeoutMs = 10000) => waitFor(() => evaluate<boolean>(`!!(\n${expression}\n)`).catch(() => false), expression, timeoutMs),
        click: (selector) => page.click(selector),
        async back() {
          await page.goBack({ waitUntil: 'load' })
        },
        async close() {
          // Pagehide runs as the tab closes; the context goes a moment later, so that a beacon can leave.
          await page.close()
          setTimeout(() => {
            contexts.delete(context)
            context.close().catch(() => {})
          }, 500)
        }
      }
    },
    async close() {
      await Promise.all([...contexts].map((context) => context.close().catch(() => {})))
      await browser.close().catch(() => {})
    }
  }
}
