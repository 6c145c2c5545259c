/** Adds a capturing listener that goes when `signal` aborts: a page stopping propagation cannot hide the event from us. */
export const listen = (target: EventTarget, type: string, listener: (event: any) => unknown, signal: AbortSignal) =>
  target.addEventListener(type, listener, { capture: true, signal })

/** Calls back when the page comes back from the back/forward cache: to the shopper, a new page view. */
export const onRestore = (callback: () => void, signal: AbortSignal) =>
  listen(window, 'pageshow', (event: PageTransitionEvent) => event.persisted && callback(), signal)

/**
 * The moments delivery cares about. `turned(hidden)` on every visibility change: turning
 * hidden is the last moment a browser reliably lets us send (mobile browsers never fire
 * unload). `leaving` on pagehide, which also covers navigations where visibilitychange does
 * not fire. unload and beforeunload are never used: they keep a page out of the
 * back/forward cache. `restored` when the page comes back from that cache.
 */
export function onLifecycle(turned: (hidden: boolean) => void, leaving: () => void, restored: () => void, signal: AbortSignal) {
  listen(document, 'visibilitychange', () => turned(document.visibilityState == 'hidden'), signal)
  listen(window, 'pagehide', leaving, signal)
  onRestore(restored, signal)
}
