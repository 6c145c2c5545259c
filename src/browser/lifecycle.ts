import type { Delivery } from './delivery'
import type { Outbox } from './outbox'
import type { TrackerOptions } from './types'

/**
 * Wires the page's life cycle to delivery, the outbox and the automatic view-page (`view`,
 * guarded by the tracker), until `signal` aborts (destroy()). Turning hidden is the last
 * moment a browser reliably lets us send (mobile browsers never fire unload); pagehide also
 * covers navigations where visibilitychange does not fire. unload and beforeunload are never
 * used: they keep a page out of the back/forward cache. Back from that cache, the page takes
 * back what nobody adopted meanwhile, and its next view is a new one (`forgetView`).
 *
 * The automatic view-page comes on load, on every SPA navigation and after a back/forward-cache
 * restore. A template or a router may describe the page itself (a product page adds item_id)
 * right after the page or route appears, so `view` runs one task later, where it can see
 * whether that URL was just viewed. A page may go before that task comes (a redirect, a
 * shopper who clicks on at once, a frame removed by its parent): a view still due then is
 * recorded when the page turns hidden or goes, so it leaves with the page's last requests.
 */
export function followPage(
  settings: TrackerOptions,
  view: () => unknown,
  forgetView: () => unknown,
  outbox: Outbox,
  delivery: Delivery,
  signal: AbortSignal
) {
  // Capturing listeners on the window, so that a page stopping propagation cannot hide an event
  // from us: the window comes first in the path of the document's events too (visibilitychange,
  // DOMContentLoaded). They go when `signal` aborts.
  const options = { capture: true, signal }
  const autoViewPage = settings.autoViewPage !== false
  // Whether an automatic view waits: for its task, or for the document to be parsed.
  let viewDue = autoViewPage && document.readyState == 'loading'
  // The signal is checked when the view runs: the timer may have been set before destroy(), or
  // by a history wrapper that another script kept in its chain.
  const viewNow = () => {
    if (!viewDue || signal.aborted) return
    viewDue = false
    view()
  }
  const viewSoon = () => {
    viewDue = true
    setTimeout(viewNow)
  }
  addEventListener('online', delivery.wake, options)
  addEventListener(
    'visibilitychange',
    () => {
      const hidden = document.visibilityState == 'hidden'
      if (hidden) viewNow()
      delivery.send(hidden)
    },
    options
  )
  addEventListener(
    'pagehide',
    () => {
      viewNow()
      delivery.send(true)
      outbox.suspend()
    },
    options
  )
  addEventListener(
    'pageshow',
    (event: PageTransitionEvent) => {
      // Back from the back/forward cache: to the shopper, a new page view.
      if (event.persisted) {
        forgetView()
        outbox.resume()
        delivery.send(false)
        if (autoViewPage) viewSoon()
      }
    },
    options
  )
  signal.addEventListener('abort', delivery.stop)
  // What earlier pages left unsent goes first.
  delivery.adopt()
  if (!autoViewPage) return
  // SPA navigations: pushState or replaceState that changed the URL, and popstate (back,
  // forward, hash links). Routers call history directly, so its methods are wrapped; destroy()
  // restores them. When another script wrapped them after us, ours stays in its chain, so that
  // script's wrapper keeps working, and still calls back: `viewNow` checks the signal.
  for (const name of ['pushState', 'replaceState'] as const) {
    const original = history[name]
    const wrapper = function (this: History, ...args: Parameters<History['pushState']>) {
      const before = location.href
      original.apply(this, args)
      if (location.href != before) viewSoon()
    }
    history[name] = wrapper
    signal.addEventListener('abort', () => history[name] == wrapper && (history[name] = original))
  }
  addEventListener('popstate', viewSoon, options)
  if (document.readyState == 'loading') addEventListener('DOMContentLoaded', viewSoon, options)
  else viewSoon()
}
