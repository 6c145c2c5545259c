import type { Delivery } from './delivery'
import { listen, onRestore } from './listen'
import type { Outbox } from './outbox'
import { autoViewPages } from './pageviews'
import type { TrackerOptions } from './types'

/**
 * Wires the page's life cycle to delivery, the outbox and the automatic view-page (`view`,
 * guarded by the tracker), until `signal` aborts (destroy()). Turning hidden is the last
 * moment a browser reliably lets us send (mobile browsers never fire unload); pagehide also
 * covers navigations where visibilitychange does not fire. unload and beforeunload are never
 * used: they keep a page out of the back/forward cache. Back from that cache, the page takes
 * back what nobody adopted meanwhile, and its next view is a new one (`forgetView`).
 */
export function followPage(
  settings: TrackerOptions,
  view: () => unknown,
  forgetView: () => unknown,
  outbox: Outbox,
  delivery: Delivery,
  signal: AbortSignal
) {
  listen(window, 'online', delivery.wake, signal)
  listen(document, 'visibilitychange', () => delivery.send(document.visibilityState == 'hidden'), signal)
  listen(
    window,
    'pagehide',
    () => {
      delivery.send(true)
      outbox.suspend()
    },
    signal
  )
  onRestore(() => {
    forgetView()
    outbox.resume()
    delivery.send(false)
  }, signal)
  signal.addEventListener('abort', delivery.stop)
  // What earlier pages left unsent goes first.
  delivery.adopt()
  if (settings.autoViewPage !== false) autoViewPages(view, signal)
}
