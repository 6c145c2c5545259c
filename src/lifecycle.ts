/**
 * Calls back when the page may be about to go away; `leaving` on pagehide, when it does. Turning hidden is the last moment a
 * browser reliably lets us send (mobile browsers never fire unload); pagehide covers
 * navigations where visibilitychange does not fire. unload and beforeunload are never used:
 * they keep a page out of the back/forward cache.
 */
export function onHidden(callback: (leaving: boolean) => void): () => void {
  const onVisibility = () => {
    if (document.visibilityState == 'hidden') callback(false)
  }
  const onPageHide = () => callback(true)
  document.addEventListener('visibilitychange', onVisibility, true)
  addEventListener('pagehide', onPageHide, true)
  return () => {
    document.removeEventListener('visibilitychange', onVisibility, true)
    removeEventListener('pagehide', onPageHide, true)
  }
}

/** Calls back when the page comes back from the back/forward cache: to the shopper, a new page view. */
export function onRestore(callback: () => void): () => void {
  const onPageShow = (event: PageTransitionEvent) => {
    if (event.persisted) callback()
  }
  addEventListener('pageshow', onPageShow, true)
  return () => removeEventListener('pageshow', onPageShow, true)
}
