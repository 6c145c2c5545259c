/**
 * Runs `run` each time the page turns hidden or goes, the moments the tracker sends what waits
 * (browser/lifecycle.ts): turning hidden is the last one a browser reliably gives, and pagehide
 * covers navigations where visibilitychange does not fire. Capturing listeners on the window,
 * as the tracker's, so that a page stopping propagation cannot hide them; gone when `signal`
 * aborts.
 */
export function whenLeaving(run: () => void, signal: AbortSignal) {
  const options = { capture: true, signal }
  addEventListener(
    'visibilitychange',
    () => {
      if (document.visibilityState == 'hidden') run()
    },
    options
  )
  addEventListener('pagehide', () => run(), options)
}
