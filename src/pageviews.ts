import { onRestore } from './lifecycle'
import { onNavigate } from './navigation'

/**
 * The automatic view-page: on load, on every SPA navigation and after a back/forward-cache
 * restore. A template or a router may describe the page itself (a product page adds item_id)
 * right after the page or route appears, so the automatic view waits one task and is skipped
 * when that URL was just viewed. Returns what stops it.
 */
export function autoViewPages(lastUrl: () => string | undefined, view: () => void, forget: () => void): () => void {
  const soon = () =>
    setTimeout(() => {
      if (location.href != lastUrl()) view()
    })
  const stops = [
    onNavigate(soon),
    onRestore(() => {
      // To the shopper, a page back from the cache is a new view, even of the same URL.
      forget()
      soon()
    })
  ]
  if (document.readyState == 'loading') {
    addEventListener('DOMContentLoaded', soon, { once: true })
    stops.push(() => removeEventListener('DOMContentLoaded', soon))
  } else soon()
  return () => stops.forEach((stop) => stop())
}
