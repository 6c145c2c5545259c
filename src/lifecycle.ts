/**
 * Calls back when the page may be about to go away; `leaving` on pagehide, when it does.
 * Turning hidden is the last moment a browser reliably lets us send (mobile browsers never
 * fire unload); pagehide covers navigations where visibilitychange does not fire. unload and
 * beforeunload are never used: they keep a page out of the back/forward cache.
 */
export function onHidden(callback: (leaving: boolean) => void, signal: AbortSignal) {
  document.addEventListener('visibilitychange', () => document.visibilityState == 'hidden' && callback(false), { capture: true, signal })
  addEventListener('pagehide', () => callback(true), { capture: true, signal })
}

/** Calls back when the page comes back from the back/forward cache: to the shopper, a new page view. */
export function onRestore(callback: () => void, signal: AbortSignal) {
  addEventListener('pageshow', (event) => event.persisted && callback(), { capture: true, signal })
}
