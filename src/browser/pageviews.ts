import { listen, onRestore } from './listen'
import { onNavigate } from './navigation'

/**
 * The automatic view-page: on load, on every SPA navigation and after a back/forward-cache
 * restore, until `signal` aborts. A template or a router may describe the page itself (a
 * product page adds item_id) right after the page or route appears, so `view` runs one task
 * later, where it can see whether that URL was just viewed.
 */
export function autoViewPages(view: () => void, signal: AbortSignal) {
  // The signal is checked when the timer fires: it may have been set before destroy(), or by a
  // history wrapper that another script kept in its chain.
  const soon = () => setTimeout(() => signal.aborted || view())
  onNavigate(soon, signal)
  onRestore(soon, signal)
  if (document.readyState == 'loading') listen(document, 'DOMContentLoaded', soon, signal)
  else soon()
}
