import { spawn, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:net'
import type { Browser as PlaywrightBrowser } from 'playwright-core'
import puppeteer, { type Browser as PuppeteerBrowser, type Page as PuppeteerPage } from 'puppeteer-core'
import { launch } from './harness'

/*
 * One small driver layer over three engines, so that a lifecycle test body runs in each:
 *
 *   chromium  Debian's Chromium through playwright-core and harness.ts's `launch()`.
 *   firefox   Debian's Firefox ESR through puppeteer-core over WebDriver BiDi, headless.
 *   webkit    Debian's WebKitGTK: MiniBrowser --automation behind WebKitWebDriver (classic W3C
 *             WebDriver over HTTP, driven here with plain fetch), on an Xvfb display that the
 *             engine starts (MiniBrowser has no headless mode).
 *
 * No browser is downloaded: Playwright's and Puppeteer's own builds are never used.
 *
 * Measured on this machine (Chromium 156, Firefox ESR 153.7, WebKitGTK 2.50.6); engines.test.ts
 * asserts the lifecycle facts per engine (see FACTS):
 *
 * - Closing the tab (EnginePage.close) fires pagehide (persisted=false) in all three, and both a
 *   sendBeacon and a fetch(keepalive) sent from it reach a loopback collector, typically within
 *   20–160 ms. Chromium: Playwright's page.close() (CDP Target.closeTarget) runs pagehide with
 *   or without runBeforeUnload. Firefox: BiDi browsingContext.close with promptUnload false runs
 *   it. WebKit: W3C Close Window runs it. Even tearing the context / session / driver down at
 *   once lost nothing in 5 of 5 tries per engine; still, that teardown waits TEARDOWN_GRACE_MS
 *   in the background, and Engine.close() waits for it.
 * - Leaving by a link click fires pagehide, and the beacon and the keepalive fetch arrive, in all
 *   three. The click is a real one everywhere (Playwright's mouse, BiDi input.performActions,
 *   WebDriver Element Click): event.isTrusted is true.
 * - Back/forward cache: after a click to another URL of the origin, back restores the page from
 *   the cache (pagehide had persisted=true, then pageshow with persisted=true, same document) in
 *   all three: Chromium because launch() drops Playwright's --disable-back-forward-cache,
 *   Firefox and WebKit by default. Firefox caveat: puppeteer's goBack() waits for a BiDi
 *   navigation event that a cache restore never sends (it times out), and its next goto() then
 *   hangs on stale state; so this layer navigates and traverses history with the raw BiDi
 *   commands (bidiContext below).
 * - Isolation: every newPage() starts with no cookies, no localStorage and no HTTP cache of
 *   earlier pages (measured for each). Chromium: a new Playwright context per page. Firefox: a
 *   new BiDi user context per page; the profile (a fresh temporary one per launch, deleted on
 *   close) and its preferences are shared by the pages of one launch. WebKit: a new
 *   WebKitWebDriver and session per page, i.e. a new MiniBrowser process with an ephemeral data
 *   store; pages share only the Xvfb display.
 * - Page errors: Chromium (Playwright 'pageerror') and Firefox (BiDi log.entryAdded, puppeteer
 *   'pageerror') report uncaught errors: thrown synchronously, from a timer, unhandled
 *   rejections. WebKit reports none: Debian's WebKitWebDriver 2.50 has no BiDi (a webSocketUrl
 *   capability fails to match) and no log endpoint, and MiniBrowser's
 *   --enable-write-console-messages-to-stdout prints nothing for ephemeral sessions, which
 *   automation sessions are. webkit's pageErrors stays empty: it does not mean "no errors".
 * - Launch: Chromium ≈0.2–0.5 s; Firefox ≈3–4 s (profile and BiDi start-up), then ≈0.2 s per
 *   page; WebKit ≈0.1–0.3 s (Xvfb), then ≈0.6–1.5 s per page (driver, session, MiniBrowser).
 *   On a loaded 2-core machine, twice that.
 * - Processes: Chromium exits by itself when Playwright's pipe closes. Firefox outlives a lost
 *   BiDi connection and Xvfb / WebKitWebDriver / MiniBrowser outlive this process, so their
 *   process groups are owned here (see own()) and end even if the test process is killed.
 */

export type EngineName = 'chromium' | 'firefox' | 'webkit'

export const ENGINES: EngineName[] = ['chromium', 'firefox', 'webkit']

/** What each engine was measured to do (see the comment above); engines.test.ts asserts it. */
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
  /** Polls the expression until it is truthy, across navigations; fails after timeoutMs. */
  waitForFunction(expression: string, timeoutMs?: number): Promise<void>
  /**
   * A real user click on the first element matching the CSS selector. A click that starts a
   * navigation may return before or after it commits, depending on the engine: follow it with
   * waitForFunction.
   */
  click(selector: string): Promise<void>
  /** History back; resolves once the previous entry is the current document and loaded. */
  back(): Promise<void>
  /**
   * Closes the tab as a user would: pagehide fires, and what the page sends from it may go.
   * The context, session or driver behind the page is torn down later (TEARDOWN_GRACE_MS).
   */
  close(): Promise<void>
  /** Uncaught errors seen so far; always empty in webkit (see FACTS). */
  readonly pageErrors: string[]
}

export interface Engine {
  readonly name: EngineName
  newPage(): Promise<EnginePage>
  /** Closes every page and process of this engine; safe to call twice, and after a failure. */
  close(): Promise<void>
}

/** How long a closed page's context / session / driver stays up so that beacons can go. */
export const TEARDOWN_GRACE_MS = 500

export async function launchEngine(name: EngineName): Promise<Engine> {
  if (name == 'chromium') return launchChromium()
  if (name == 'firefox') return launchFirefox()
  if (name == 'webkit') return launchWebkit()
  throw new Error('unknown engine ' + name)
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The expression, awaited, as JSON text (or undefined): the same wire shape in every engine. */
const asJson = (expression: string) => `(async () => (\n${expression}\n))().then((value) => JSON.stringify(value))`

const parse = <T>(json: unknown): T => (typeof json == 'string' ? JSON.parse(json) : undefined) as T

/** waitForFunction over evaluate: an evaluation that fails mid-navigation is simply retried. */
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
 * Teardowns that a closed page left running in the background; the engine's close() waits for
 * them, so no process outlives the engine.
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
          // A cache restore fires no load event: wait for the commit, then for the document.
          await page.goBack({ waitUntil: 'commit' })
          await poll(evaluate, 'document.readyState == "complete"')
        },
        async close() {
          if (closed) return
          closed = true
          // Without runBeforeUnload (Playwright's default) no beforeunload prompt can keep the
          // tab open; pagehide and unload still run (measured).
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
 * Process groups this module owns: Firefox (spawned by puppeteer), Xvfb, and per WebKit page a
 * WebKitWebDriver with its MiniBrowser and WebKit's helper processes. Each is spawned detached, i.e. as the leader of its own group, so one
 * signal to the group ends it all. If the test process goes without closing the engine, two
 * things still end the groups: an exit handler (a normal exit), and for each group a small
 * watchdog shell that polls this process and kills the group once it is gone (a worker killed
 * by a signal, a crash). Closing the engine ends the groups and their watchdogs.
 */
const groups = new Map<number, ChildProcess>()
let exitHook = false
function own(child: ChildProcess) {
  const watchdog = spawn(
    'sh',
    ['-c', 'while kill -0 "$0" 2>/dev/null; do sleep 1; done; kill -9 -"$1" 2>/dev/null', String(process.pid), String(child.pid)],
    { detached: true, stdio: 'ignore' }
  )
  watchdog.unref()
  groups.set(child.pid!, watchdog)
  if (!exitHook) {
    exitHook = true
    process.once('exit', () => {
      for (const [group, watchdog] of groups) {
        try {
          process.kill(-group, 'SIGKILL')
        } catch {}
        watchdog.kill('SIGKILL')
      }
    })
  }
}

/** Ends a process group: SIGTERM, then SIGKILL if the leader is still there after a while. */
async function endGroup(child: ChildProcess, grace = 2000) {
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, name)
    } catch {}
  }
  const running = child.exitCode == null && child.signalCode == null
  if (running) {
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
    signal('SIGTERM')
    if (!(await Promise.race([exited.then(() => true), sleep(grace).then(() => false)]))) {
      signal('SIGKILL')
      await exited
    }
  }
  // Whatever the leader left in its group (MiniBrowser, WebKit's helpers) goes too.
  signal('SIGKILL')
  groups.get(child.pid!)?.kill('SIGKILL')
  groups.delete(child.pid!)
}

// ---------------------------------------------------------------- firefox

/**
 * The BiDi browsing context behind a puppeteer page: not public API, but the only way to
 * navigate and traverse history without puppeteer's navigation tracking, which a
 * back/forward-cache restore leaves stale (puppeteer-core is pinned, so this cannot move).
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
  // No userDataDir: puppeteer makes a fresh temporary profile and deletes it on close.
  const browser: PuppeteerBrowser = await puppeteer.launch({
    browser: 'firefox',
    executablePath: '/usr/bin/firefox-esr',
    headless: true,
    protocolTimeout: 30000,
    // Background services that puppeteer's test prefs leave on and that would reach for the
    // network. Otherwise the profile keeps Firefox's own cookie behaviour (Total Cookie
    // Protection): puppeteer's prefs turn the content-blocking category to "custom" without
    // touching network.cookie.cookieBehavior (checked in the profile's prefs.js).
    extraPrefsFirefox: {
      'network.captive-portal-service.enabled': false,
      'network.connectivity-service.enabled': false,
      'browser.safebrowsing.update.enabled': false
    }
  })
  // puppeteer spawns Firefox as the leader of its own group; owning that group ends Firefox
  // even when this process dies without closing the engine (Firefox, unlike Chromium on
  // Playwright's pipe, outlives a lost WebDriver BiDi connection).
  const firefox = browser.process()
  if (firefox) own(firefox)
  const background = teardowns()
  return {
    name: 'firefox',
    async newPage() {
      // A BiDi user context per page: cookies and storage of earlier pages are not seen.
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
          // A document is told apart by its timeOrigin (a restored page keeps its own).
          const before = await evaluate<string>('location.href + " " + performance.timeOrigin')
          await bidi.traverseHistory(-1)
          await poll(
            evaluate,
            `location.href + " " + performance.timeOrigin != ${JSON.stringify(before)} && document.readyState == "complete"`
          )
        },
        async close() {
          if (closed) return
          closed = true
          // browsingContext.close with promptUnload false: pagehide and unload still run.
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

/** Xvfb on the first free display: -displayfd makes it pick one and say which, once ready. */
async function startXvfb() {
  const xvfb = spawn('Xvfb', ['-displayfd', '3', '-screen', '0', '1280x800x24', '-nolisten', 'tcp'], {
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe', 'pipe']
  })
  own(xvfb)
  let stderr = ''
  xvfb.stderr!.on('data', (chunk) => (stderr += chunk))
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

/** One WebKitWebDriver on a free port (retried if another process took the port meanwhile). */
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
    driver.stderr!.on('data', (chunk) => (stderr += chunk))
    const base = `http://127.0.0.1:${port}`
    const end = Date.now() + 10000
    while (driver.exitCode == null && driver.signalCode == null && Date.now() < end) {
      try {
        const response = await fetch(base + '/status', { signal: AbortSignal.timeout(1000) })
        if (response.ok) return { driver, base }
      } catch {}
      await sleep(25)
    }
    await endGroup(driver)
    if (attempt == 2) throw new Error('WebKitWebDriver did not start: ' + stderr.trim().slice(-500))
  }
}

/** One W3C WebDriver command; a WebDriver error becomes a thrown Error. */
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
      // A driver per page: a WebKitWebDriver holds one session at a time (a second one fails
      // with "Maximum number of active sessions"), and its group ends that page's MiniBrowser.
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
              // --automation gives an ephemeral data store: a fresh one per session.
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
        // execute/async: the callback is the last argument; an error comes back as data.
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
          // Back waits for the navigation, as the WebDriver spec says; a cache restore included.
          await command(base, 'POST', at + '/back', {})
          await poll(evaluate, 'document.readyState == "complete"')
        },
        async close() {
          if (pageClosed) return
          pageClosed = true
          // Close Window runs pagehide; the session and MiniBrowser end after the grace period.
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
