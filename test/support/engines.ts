import { spawn, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:net'
import type { Browser as PlaywrightBrowser } from 'playwright-core'
import puppeteer, { type Browser as PuppeteerBrowser, type Page as PuppeteerPage } from 'puppeteer-core'
import { launch } from './harness'
import { sleep } from './wait'

/*
 * This module is one small driver layer over three browser engines, so that a lifecycle test
 * body can run in each of them.
 *
 * Chromium is Debian's Chromium, driven through playwright-core and the launch() of harness.ts.
 * Firefox is Debian's Firefox ESR, driven headless through puppeteer-core over WebDriver BiDi.
 * WebKit is Debian's WebKitGTK: MiniBrowser --automation behind WebKitWebDriver, which speaks
 * classic W3C WebDriver over HTTP and is driven here with plain fetch. MiniBrowser has no
 * headless mode, so it runs on an Xvfb display that the engine starts.
 *
 * No browser is downloaded. Playwright's and Puppeteer's own builds are never used.
 *
 * The facts below were measured on this machine with Chromium 156, Firefox ESR 153.7 and
 * WebKitGTK 2.50.6. The lifecycle facts are recorded per engine in FACTS, and
 * engines.e2e.test.ts asserts them.
 *
 * Closing the tab with EnginePage.close fires pagehide with persisted=false in all three
 * engines. Both a sendBeacon and a fetch with keepalive sent from that pagehide reach a loopback
 * collector, typically within 20 to 160 ms. In Chromium, Playwright's page.close() (CDP
 * Target.closeTarget) runs pagehide with or without runBeforeUnload. In Firefox, BiDi
 * browsingContext.close with promptUnload false runs it. In WebKit, W3C Close Window runs it.
 * Tearing down the context, session or driver at once lost nothing in 5 of 5 tries per engine.
 * Even so, that teardown waits TEARDOWN_GRACE_MS in the background, and Engine.close() waits for
 * it.
 *
 * Leaving by a link click fires pagehide in all three engines, and the beacon and the keepalive
 * fetch arrive. The click is a real one everywhere (Playwright's mouse, BiDi
 * input.performActions, WebDriver Element Click), so event.isTrusted is true.
 *
 * After a click to another URL of the same origin, going back restores the page from the
 * back/forward cache in all three engines. The pagehide had persisted=true, the pageshow has
 * persisted=true, and the document is the same. Chromium does this because launch() drops
 * Playwright's --disable-back-forward-cache flag, and Firefox and WebKit do it by default. In
 * Firefox, puppeteer's goBack() waits for a BiDi navigation event that a cache restore never
 * sends, so it times out, and its next goto() then hangs on stale state. This layer therefore
 * navigates and traverses history with the raw BiDi commands (see bidiContext below).
 *
 * Every newPage() starts with no cookies, no localStorage and no HTTP cache of earlier pages, as
 * measured for each engine. Chromium gets a new Playwright context per page. Firefox gets a new
 * BiDi user context per page, while the pages of one launch share the profile and its
 * preferences; the profile is a fresh temporary one per launch and is deleted on close. WebKit
 * gets a new WebKitWebDriver and session per page, which means a new MiniBrowser process with an
 * ephemeral data store, and the pages share only the Xvfb display.
 *
 * Chromium (through Playwright's 'pageerror') and Firefox (through BiDi log.entryAdded and
 * puppeteer's 'pageerror') report uncaught errors: errors thrown synchronously, errors thrown
 * from a timer, and unhandled rejections. WebKit reports none. Debian's WebKitWebDriver 2.50 has
 * no BiDi (a webSocketUrl capability fails to match) and no log endpoint, and MiniBrowser's
 * --enable-write-console-messages-to-stdout prints nothing for ephemeral sessions, which
 * automation sessions are. An empty pageErrors in webkit therefore does not mean that there
 * were no errors.
 *
 * Chromium launches in about 0.2 to 0.5 s. Firefox takes about 3 to 4 s for the profile and the
 * BiDi start-up, then about 0.2 s per page. WebKit takes about 0.1 to 0.3 s for Xvfb, then about
 * 0.6 to 1.5 s per page for the driver, the session and MiniBrowser. On a loaded machine with
 * two cores, each takes about twice as long.
 *
 * Chromium exits by itself when Playwright's pipe closes. Firefox outlives a lost BiDi
 * connection, and Xvfb, WebKitWebDriver and MiniBrowser outlive this process. Their process
 * groups are therefore owned here (see own()), and they end even if the test process is killed.
 */

export type EngineName = 'chromium' | 'firefox' | 'webkit'

export const ENGINES: EngineName[] = ['chromium', 'firefox', 'webkit']

/**
 * This records what each engine was measured to do (see the comment above).
 * engines.e2e.test.ts asserts it.
 */
export const FACTS: Record<EngineName, { bfcache: boolean; pageErrors: boolean }> = {
  chromium: { bfcache: true, pageErrors: true },
  firefox: { bfcache: true, pageErrors: true },
  webkit: { bfcache: true, pageErrors: false }
}

export interface EnginePage {
  /** Navigates and waits for the load event. */
  goto(url: string): Promise<void>
  /**
   * Evaluates a JavaScript expression in the page; it may use `await` and may give a promise,
   * which is awaited. The result goes through JSON.stringify in the page and JSON.parse here,
   * identically in every engine (undefined stays undefined).
   */
  evaluate<T = unknown>(expression: string): Promise<T>
  /** Polls the expression until it is truthy, across navigations. It fails after timeoutMs. */
  waitForFunction(expression: string, timeoutMs?: number): Promise<void>
  /**
   * Clicks the first element that matches the CSS selector, as a real user would. A click that
   * starts a navigation may return before or after the navigation commits, depending on the
   * engine, so follow it with waitForFunction.
   */
  click(selector: string): Promise<void>
  /** Goes back in history. It resolves once the previous entry is the current document and has loaded. */
  back(): Promise<void>
  /**
   * Closes the tab as a user would. Pagehide fires, and what the page sends from it may still go
   * out. The context, session or driver behind the page is torn down TEARDOWN_GRACE_MS later.
   */
  close(): Promise<void>
  /** These are the uncaught errors seen so far. The list is always empty in webkit (see FACTS). */
  readonly pageErrors: string[]
}

export interface Engine {
  readonly name: EngineName
  newPage(): Promise<EnginePage>
  /** Closes every page and process of this engine. It is safe to call twice, and after a failure. */
  close(): Promise<void>
}

/** This is how long a closed page's context, session or driver stays up, so that its beacons can go. */
export const TEARDOWN_GRACE_MS = 500

export async function launchEngine(name: EngineName): Promise<Engine> {
  if (name == 'chromium') return launchChromium()
  if (name == 'firefox') return launchFirefox()
  if (name == 'webkit') return launchWebkit()
  throw new Error('unknown engine ' + name)
}

/**
 * Wraps the expression so that its awaited value comes back as JSON text (or undefined), the same
 * way in every engine.
 */
const asJson = (expression: string) => `(async () => (\n${expression}\n))().then((value) => JSON.stringify(value))`

const parse = <T>(json: unknown): T => (typeof json == 'string' ? JSON.parse(json) : undefined) as T

/** Implements waitForFunction with evaluate. An evaluation that fails mid-navigation is retried. */
async function poll(evaluate: (expression: string) => Promise<unknown>, expression: string, timeoutMs = 10000) {
  const end = Date.now() + timeoutMs
  let last: unknown
  for (;;) {
    try {
      if (await evaluate(`!!(\n${expression}\n)`)) return
      last = undefined
    } catch (error) {
      last = error
    }
    if (Date.now() > end) {
      const why = last ? ' (last error: ' + String((last as Error).message ?? last).split('\n')[0] + ')' : ''
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${expression}${why}`)
    }
    await sleep(50)
  }
}

/**
 * Keeps track of the teardowns that closed pages left running in the background. The engine's
 * close() waits for them, so that no process outlives the engine.
 */
function teardowns() {
  const pending = new Set<Promise<void>>()
  return {
    later(work: () => Promise<unknown>) {
      const done: Promise<void> = sleep(TEARDOWN_GRACE_MS)
        .then(work)
        .then(
          () => {},
          () => {}
        )
        .finally(() => pending.delete(done))
      pending.add(done)
    },
    all: () => Promise.all([...pending]).then(() => {})
  }
}

// ---------------------------------------------------------------- chromium

async function launchChromium(): Promise<Engine> {
  const browser: PlaywrightBrowser = await launch()
  const background = teardowns()
  return {
    name: 'chromium',
    async newPage() {
      const context = await browser.newContext()
      const page = await context.newPage()
      const pageErrors: string[] = []
      page.on('pageerror', (error) => pageErrors.push(error.message))
      const evaluate = async <T>(expression: string) => parse<T>(await page.evaluate(asJson(expression)))
      let closed = false
      return {
        pageErrors,
        goto: async (url) => void (await page.goto(url, { waitUntil: 'load' })),
        evaluate,
        waitForFunction: (expression, timeoutMs) => poll(evaluate, expression, timeoutMs),
        click: (selector) => page.click(selector),
        async back() {
          // A cache restore fires no load event, so wait for the commit and then for the document.
          await page.goBack({ waitUntil: 'commit' })
          await poll(evaluate, 'document.readyState == "complete"')
        },
        async close() {
          if (closed) return
          closed = true
          // Without runBeforeUnload, which is Playwright's default, no beforeunload prompt can keep
          // the tab open. Pagehide and unload still run, as measured.
          await page.close()
          background.later(() => context.close())
        }
      }
    },
    async close() {
      await background.all()
      await browser.close().catch(() => {})
    }
  }
}

// ---------------------------------------------------------------- processes

/**
 * These are the process groups that this module owns: Firefox (spawned by puppeteer), Xvfb, and
 * for each WebKit page a WebKitWebDriver with its MiniBrowser and WebKit's helper processes. Each
 * is spawned detached, which makes it the leader of its own group, so one signal to the group
 * ends all of it. If the test process goes away without closing the engine, two things still
 * end the groups. An exit handler covers a normal exit. For each group, a small watchdog shell
 * polls this process and kills the group once the process is gone, which covers a worker killed
 * by a signal or a crash. Closing the engine ends the groups and their watchdogs.
 */
const groups = new Map<number, ChildProcess>()
let exitHook = false
function own(child: ChildProcess) {
  const watchdog = spawn('sh', ['-c', 'while kill -0 "$0" 2>/dev/null; do sleep 1; done; kill -9 -"$1" 2>/dev/null', String(process.pid), String(child.pid)], {
    detached: true,
    stdio: 'ignore'
  })
  watchdog.unref()
  groups.set(child.pid!, watchdog)
  if (!exitHook) {
    exitHook = true
    process.once('exit', () => {
      for (const [group, watchdog] of groups) {
        try {
          process.kill(-group, 'SIGKILL')
        } catch {
          // The group has already ended.
        }
        watchdog.kill('SIGKILL')
      }
    })
  }
}

/** Ends a process group with SIGTERM, then with SIGKILL if the leader is still there after `grace` ms. */
async function endGroup(child: ChildProcess, grace = 2000) {
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, name)
    } catch {
      // The group has already ended.
    }
  }
  const running = child.exitCode == null && child.signalCode == null
  if (running) {
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
    signal('SIGTERM')
    const exitedInTime = await Promise.race([exited.then(() => true), sleep(grace).then(() => false)])
    if (!exitedInTime) {
      signal('SIGKILL')
      await exited
    }
  }
  // Whatever the leader left in its group, such as MiniBrowser and WebKit's helpers, goes too.
  signal('SIGKILL')
  groups.get(child.pid!)?.kill('SIGKILL')
  groups.delete(child.pid!)
}

// ---------------------------------------------------------------- firefox

/**
 * Gives the BiDi browsing context behind a puppeteer page. It is not public API, but it is the
 * only way to navigate and traverse history without puppeteer's navigation tracking, which a
 * back/forward cache restore leaves stale. puppeteer-core is pinned, so this cannot move.
 */
interface BidiContext {
  navigate(url: string, wait: 'none' | 'interactive' | 'complete'): Promise<void>
  traverseHistory(delta: number): Promise<void>
}
const bidiContext = (page: PuppeteerPage): BidiContext => {
  const context = (page.mainFrame() as unknown as { browsingContext?: BidiContext }).browsingContext
  if (!context || typeof context.navigate != 'function' || typeof context.traverseHistory != 'function')
    throw new Error('puppeteer-core no longer exposes the BiDi browsing context: update engines.ts')
  return context
}

async function launchFirefox(): Promise<Engine> {
  // Without a userDataDir, puppeteer makes a fresh temporary profile and deletes it on close.
  const browser: PuppeteerBrowser = await puppeteer.launch({
    browser: 'firefox',
    executablePath: '/usr/bin/firefox-esr',
    headless: true,
    protocolTimeout: 30000,
    // These turn off background services that puppeteer's test prefs leave on and that would
    // reach for the network. Otherwise the profile keeps Firefox's own cookie behaviour (Total
    // Cookie Protection). Puppeteer's prefs set the content-blocking category to "custom" without
    // touching network.cookie.cookieBehavior, as checked in the profile's prefs.js.
    extraPrefsFirefox: {
      'network.captive-portal-service.enabled': false,
      'network.connectivity-service.enabled': false,
      'browser.safebrowsing.update.enabled': false
    }
  })
  // Puppeteer spawns Firefox as the leader of its own group. Owning that group ends Firefox even
  // when this process dies without closing the engine. Unlike Chromium on Playwright's pipe,
  // Firefox outlives a lost WebDriver BiDi connection.
  const firefox = browser.process()
  if (firefox) own(firefox)
  const background = teardowns()
  return {
    name: 'firefox',
    async newPage() {
      // Each page gets its own BiDi user context, so it sees no cookies or storage of earlier pages.
      const context = await browser.createBrowserContext()
      const page = await context.newPage()
      page.setDefaultTimeout(30000)
      const pageErrors: string[] = []
      page.on('pageerror', (error) => pageErrors.push(error instanceof Error ? error.message : String(error)))
      const bidi = bidiContext(page)
      const evaluate = async <T>(expression: string) => parse<T>(await page.evaluate(asJson(expression)))
      let closed = false
      return {
        pageErrors,
        goto: (url) => bidi.navigate(url, 'complete'),
        evaluate,
        waitForFunction: (expression, timeoutMs) => poll(evaluate, expression, timeoutMs),
        click: (selector) => page.click(selector),
        async back() {
          // A document is told apart by its timeOrigin. A restored page keeps its own.
          const before = await evaluate<string>('location.href + " " + performance.timeOrigin')
          await bidi.traverseHistory(-1)
          await poll(evaluate, `location.href + " " + performance.timeOrigin != ${JSON.stringify(before)} && document.readyState == "complete"`)
        },
        async close() {
          if (closed) return
          closed = true
          // This is browsingContext.close with promptUnload false. Pagehide and unload still run.
          await page.close()
          background.later(() => context.close())
        }
      }
    },
    async close() {
      await background.all()
      await browser.close().catch(() => {})
      if (firefox) await endGroup(firefox)
    }
  }
}

// ---------------------------------------------------------------- webkit

const MINIBROWSER = '/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser'

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

/** Starts Xvfb on the first free display. With -displayfd it picks one and says which, once it is ready. */
async function startXvfb() {
  const xvfb = spawn('Xvfb', ['-displayfd', '3', '-screen', '0', '1280x800x24', '-nolisten', 'tcp'], {
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe', 'pipe']
  })
  own(xvfb)
  let stderr = ''
  xvfb.stderr!.on('data', (chunk) => {
    stderr += chunk
  })
  try {
    const display = await new Promise<string>((resolve, reject) => {
      let text = ''
      xvfb.stdio[3]!.on('data', (chunk) => {
        text += chunk
        if (text.includes('\n')) resolve(':' + text.trim())
      })
      xvfb.once('error', reject)
      xvfb.once('exit', (code) => reject(new Error('Xvfb exited (' + code + '): ' + stderr.trim().slice(-500))))
      const timer = setTimeout(() => reject(new Error('Xvfb gave no display within 10 s: ' + stderr.trim().slice(-500))), 10000)
      timer.unref()
    })
    return { display, xvfb }
  } catch (error) {
    await endGroup(xvfb)
    throw error
  }
}

/** Starts one WebKitWebDriver on a free port. It retries if another process took the port meanwhile. */
async function startDriver(display: string) {
  for (let attempt = 0; ; attempt++) {
    const port = await freePort()
    const driver = spawn('WebKitWebDriver', ['--port=' + port, '--host=127.0.0.1'], {
      detached: true,
      env: { ...process.env, DISPLAY: display },
      stdio: ['ignore', 'ignore', 'pipe']
    })
    own(driver)
    let stderr = ''
    driver.stderr!.on('data', (chunk) => {
      stderr += chunk
    })
    const base = `http://127.0.0.1:${port}`
    const end = Date.now() + 10000
    while (driver.exitCode == null && driver.signalCode == null && Date.now() < end) {
      try {
        const response = await fetch(base + '/status', { signal: AbortSignal.timeout(1000) })
        if (response.ok) return { driver, base }
      } catch {
        // The driver is not listening yet, so try again.
      }
      await sleep(25)
    }
    await endGroup(driver)
    if (attempt == 2) throw new Error('WebKitWebDriver did not start: ' + stderr.trim().slice(-500))
  }
}

/** Sends one W3C WebDriver command. A WebDriver error becomes a thrown Error. */
async function command<T = unknown>(base: string, method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown, timeoutMs = 60000) {
  const response = await fetch(base + path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs)
  })
  const json = (await response.json().catch(() => ({}))) as { value?: any }
  if (!response.ok) {
    const value = json.value ?? {}
    throw new Error(`WebDriver ${method} ${path}: ${value.error ?? response.status}: ${value.message ?? ''}`)
  }
  return json.value as T
}

const ELEMENT = 'element-6066-11e4-a52e-4f735466cecf'

async function launchWebkit(): Promise<Engine> {
  const { display, xvfb } = await startXvfb()
  const background = teardowns()
  const open = new Set<() => Promise<void>>()
  let closed = false
  return {
    name: 'webkit',
    async newPage() {
      if (closed) throw new Error('webkit engine is closed')
      // Each page gets its own driver. A WebKitWebDriver holds one session at a time (a second
      // one fails with "Maximum number of active sessions"), and its group ends that page's
      // MiniBrowser.
      const { driver, base } = await startDriver(display)
      let session: string | undefined
      let ended = false
      const end = async () => {
        if (ended) return
        ended = true
        open.delete(end)
        if (session) await command(base, 'DELETE', '/session/' + session, undefined, 5000).catch(() => {})
        await endGroup(driver)
      }
      open.add(end)
      try {
        const created = await command<{ sessionId: string }>(base, 'POST', '/session', {
          capabilities: {
            alwaysMatch: {
              pageLoadStrategy: 'normal',
              timeouts: { script: 30000, pageLoad: 30000, implicit: 0 },
              // With --automation, each session gets a fresh ephemeral data store.
              'webkitgtk:browserOptions': { binary: MINIBROWSER, args: ['--automation'] }
            }
          }
        })
        session = created.sessionId
      } catch (error) {
        await end()
        throw error
      }
      const at = '/session/' + session
      const evaluate = async <T>(expression: string) => {
        // With execute/async the callback is the last argument, and an error comes back as data.
        const [ok, value] = await command<[boolean, unknown]>(base, 'POST', at + '/execute/async', {
          script:
            'const done = arguments[arguments.length - 1];' +
            asJson(expression) +
            '.then((json) => done([true, json]), (error) => done([false, String(error)]))',
          args: []
        })
        if (!ok) throw new Error('evaluate failed: ' + value)
        return parse<T>(value)
      }
      let pageClosed = false
      return {
        pageErrors: [],
        goto: async (url) => void (await command(base, 'POST', at + '/url', { url })),
        evaluate,
        waitForFunction: (expression, timeoutMs) => poll(evaluate, expression, timeoutMs),
        async click(selector) {
          const element = await command<Record<string, string>>(base, 'POST', at + '/element', { using: 'css selector', value: selector })
          await command(base, 'POST', `${at}/element/${element[ELEMENT]}/click`, {})
        },
        async back() {
          // Back waits for the navigation, as the WebDriver spec says, and that includes a cache restore.
          await command(base, 'POST', at + '/back', {})
          await poll(evaluate, 'document.readyState == "complete"')
        },
        async close() {
          if (pageClosed) return
          pageClosed = true
          // Close Window runs pagehide. The session and MiniBrowser end after the grace period.
          await command(base, 'DELETE', at + '/window', undefined, 10000).catch(() => {})
          background.later(end)
        }
      }
    },
    async close() {
      closed = true
      await background.all()
      await Promise.all([...open].map((end) => end()))
      await endGroup(xvfb)
    }
  }
}
