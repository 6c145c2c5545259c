import { listen, onRestore } from './lifecycle'
import { onNavigate } from './navigation'

/**
 * The automatic view-page: on load, on every SPA navigation and after a back/forward-cache
 * restore, until `signal` aborts. A template or a router may describe the page itself (a
 * product page adds item_id) right after the page or route appears, so the automatic view
 * waits one task and is skipped when that URL was just viewed.
 */
export function autoViewPages(lastUrl: () => string | undefined, view: () => void, forget: () => void, signal: AbortSignal) {
  const soon = () =>
    setTimeout(() => {
      if (!signal.aborted && location.href != lastUrl()) view()
    })
  onNavigate(soon, signal)
  onRestore(() => {
    // To the shopper, a page back from the cache is a new view, even of the same URL.
    forget()
    soon()
  }, signal)
  if (document.readyState == 'loading') listen(document, 'DOMContentLoaded', soon, signal)
  else soon()
}
