// @vitest-environment node
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ENGINES, FACTS, launchEngine, type Engine, type EnginePage } from '../support/engines'
import { startServers, type Servers } from '../support/harness'
import { waitFor } from '../support/wait'

// The lifecycle facts engines.ts documents, checked in each engine: a page loads and evaluates;
// a beacon and a fetch(keepalive) sent on pagehide reach the collector when the tab is closed and
// when a link click leaves the page; back restores from the back/forward cache (or not, as
// measured); pages are isolated; uncaught errors are reported where the engine lets us see them.

// Every request carries the page's own tag, so that a late beacon of one test is never counted
// by another.
const LIFECYCLE = `<script>
  const tag = new URLSearchParams(location.search).get('tag')
  window.shows = []
  window.clicks = []
  addEventListener('pageshow', (event) => shows.push(event.persisted))
  addEventListener('click', (event) => clicks.push(event.isTrusted))
  addEventListener('pagehide', (event) => {
    const query = '?tag=' + tag + '&persisted=' + event.persisted
    navigator.sendBeacon('{{collector}}' + query + '&via=beacon', '[]')
    fetch('{{collector}}' + query + '&via=keepalive', { method: 'POST', body: '[]', keepalive: true })
  })
</script>
<h1>shop</h1><a id="away" href="/elsewhere">leave</a>`

const THROWS = `<script>setTimeout(() => { throw new Error('timer boom') }, 0)</script><script>throw new TypeError('sync boom')</script><p>after</p>`

describe.each(ENGINES)('%s', (name) => {
  let engine: Engine
  let servers: Servers
  let count = 0
  const pages: EnginePage[] = []

  beforeAll(async () => {
    servers = await startServers()
    servers.page('/shop', LIFECYCLE)
    servers.page('/elsewhere', '<h1>elsewhere</h1>')
    servers.page('/throws', THROWS)
    engine = await launchEngine(name)
  })
  afterAll(async () => {
    // Closes the pages a failed test left open, then every process of the engine.
    await Promise.all(pages.map((page) => page.close().catch(() => {})))
    await engine?.close()
    await servers?.close()
  })

  const open = async () => {
    const page = await engine.newPage()
    pages.push(page)
    return page
  }
  /** Opens the shop with a fresh tag; returns the page and the tag. */
  const shop = async () => {
    const page = await open()
    const tag = name + '-' + ++count
    await page.goto(`${servers.origin}/shop?tag=${tag}`)
    return { page, tag }
  }
  /** What the collector received from the page with this tag: "via:persisted" per POST. */
  const sent = (tag: string) =>
    servers
      .posts()
      .filter((request) => request.path == '/v3/feedback' && request.query.get('tag') == tag)
      .map((request) => request.query.get('via') + ':' + request.query.get('persisted'))
      .sort()

  it('loads a page and evaluates expressions in it', async () => {
    const { page } = await shop()
    expect(await page.evaluate('document.querySelector("h1").textContent')).toBe('shop')
    expect(await page.evaluate('(async () => { await new Promise((resolve) => setTimeout(resolve, 10)); return { shows, n: 1 + 1 } })()')).toEqual({
      shows: [false],
      n: 2
    })
    expect(await page.evaluate('await Promise.resolve([location.pathname, typeof tag])')).toEqual(['/shop', 'string'])
    expect(await page.evaluate('undefined')).toBeUndefined()
    await expect(page.evaluate('Promise.reject(new Error("no"))')).rejects.toThrow(/no/)
    await page.close()
  })

  it('starts every page with no cookies and no storage of earlier pages', async () => {
    const { page: first } = await shop()
    await first.evaluate(`(document.cookie = 'seen=1; max-age=3600', localStorage.setItem('seen', '1'))`)
    expect(await first.evaluate('[document.cookie, localStorage.getItem("seen")]')).toEqual(['seen=1', '1'])
    const { page: second } = await shop()
    expect(await second.evaluate('[document.cookie, localStorage.getItem("seen")]')).toEqual(['', null])
    // Side by side, each keeps its own.
    expect(await first.evaluate('localStorage.getItem("seen")')).toBe('1')
    await Promise.all([first.close(), second.close()])
  })

  it('delivers a beacon and a keepalive fetch sent on pagehide when the tab is closed', async () => {
    const { page, tag } = await shop()
    expect(sent(tag)).toEqual([])
    await page.close()
    await waitFor(() => sent(tag).length >= 2, 'both pagehide requests of ' + tag, 10000)
    expect(sent(tag)).toEqual(['beacon:false', 'keepalive:false'])
  })

  it('delivers the pagehide beacon when a link click leaves the page', async () => {
    const { page, tag } = await shop()
    await page.click('#away')
    await page.waitForFunction('location.pathname == "/elsewhere" && document.readyState == "complete"')
    await waitFor(() => sent(tag).length >= 2, 'both pagehide requests of ' + tag, 10000)
    // The page goes into the back/forward cache where the engine has one: pagehide says so.
    const persisted = FACTS[name].bfcache
    expect(sent(tag)).toEqual(['beacon:' + persisted, 'keepalive:' + persisted])
    await page.close()
  })

  it(`${FACTS[name].bfcache ? 'restores' : 'does not restore'} the page from the back/forward cache on back`, async () => {
    const { page } = await shop()
    // A real (trusted) click, so that the page is left as a user leaves it.
    await page.click('#away')
    await page.waitForFunction('location.pathname == "/elsewhere" && document.readyState == "complete"')
    await page.back()
    expect(await page.evaluate('location.pathname')).toBe('/shop')
    // Restored: the same document, shown again with persisted=true, its click still recorded.
    // Not restored: a new document, shown once.
    if (FACTS[name].bfcache) expect(await page.evaluate('[shows, clicks]')).toEqual([[false, true], [true]])
    else expect(await page.evaluate('[shows, clicks]')).toEqual([[false], []])
    await page.close()
  })

  it(FACTS[name].pageErrors ? 'reports uncaught errors' : 'cannot report uncaught errors (pageErrors stays empty)', async () => {
    const page = await open()
    await page.goto(servers.origin + '/throws')
    expect(await page.evaluate('document.querySelector("p").textContent')).toBe('after')
    if (FACTS[name].pageErrors) {
      await waitFor(() => page.pageErrors.length >= 2, 'two page errors', 5000)
      expect(page.pageErrors.map((message) => message.replace(/^\w*Error: /, '')).sort()).toEqual(['sync boom', 'timer boom'])
    } else {
      expect(page.pageErrors).toEqual([])
    }
    await page.close()
  })
})
