/**
 * The automatic view-page: on load, on every SPA navigation and after a back/forward-cache
 * restore, until `signal` aborts (destroy()). A template or a router may describe the page
 * itself (a product page adds item_id) right after the page or route appears, so `view` runs
 * one task later, where the tracker can see whether that URL was just viewed. A page may go
 * before that task comes (a redirect, a shopper who clicks on at once, a frame removed by its
 * parent): the life cycle then calls `recordDue`, so the view leaves with the page's last
 * requests.
 */
export function followPageViews(view: () => unknown, signal: AbortSignal) {
  // Capturing listeners on the window, as in lifecycle.ts; they go when `signal` aborts.
  const options = { capture: true, signal }
  // Whether a view waits: for its task, or for the document to be parsed.
  let due = document.readyState == 'loading'

  /** Records the view that is due, if any. */
  const recordDue = () => {
    // The signal is checked here: the timer may have been set before destroy(), or by a
    // history wrapper that another script kept in its chain.
    if (!due || signal.aborted) return
    due = false
    view()
  }
  const viewSoon = () => {
    due = true
    setTimeout(recordDue)
  }

  // SPA navigations: pushState or replaceState that changed the URL, and popstate (back,
  // forward, hash links). Routers call history directly, so its methods are wrapped; destroy()
  // restores them. When another script wrapped them after us, ours stays in its chain, so that
  // script's wrapper keeps working, and still calls back: `recordDue` checks the signal.
  for (const name of ['pushState', 'replaceState'] as const) {
    const original = history[name]
    const wrapper = function (this: History, ...args: Parameters<History['pushState']>) {
      const before = location.href
      original.apply(this, args)
      if (location.href != before) viewSoon()
    }
    history[name] = wrapper
    signal.addEventListener('abort', () => {
      if (history[name] == wrapper) history[name] = original
    })
  }
  addEventListener('popstate', viewSoon, options)
  if (due) addEventListener('DOMContentLoaded', viewSoon, options)
  else viewSoon()

  return {
    recordDue,
    /** Back from the back/forward cache: to the shopper, a new page view. */
    restored: viewSoon
  }
}

export type PageViews = ReturnType<typeof followPageViews>
