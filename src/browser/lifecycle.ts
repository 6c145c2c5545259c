import type { Delivery } from './delivery'
import type { Outbox } from './outbox'

export interface LifecycleHooks {
  /** The page turns hidden or goes: runs before what waits is sent (a view still due is recorded). */
  beforeLeaving(): void
  /** The page came back from the back/forward cache. */
  restored(): void
}

/**
 * Wires the page's life cycle to delivery and the outbox until `signal` aborts (destroy()).
 * Turning hidden is the last moment a browser reliably lets us send (mobile browsers never
 * fire unload); pagehide also covers navigations where visibilitychange does not fire. unload
 * and beforeunload are never used: they keep a page out of the back/forward cache. Back from
 * that cache, the page takes back what nobody adopted meanwhile.
 */
export function followPage(outbox: Outbox, delivery: Delivery, hooks: LifecycleHooks, signal: AbortSignal) {
  // Capturing listeners on the window, so that a page stopping propagation cannot hide an event
  // from us: the window comes first in the path of the document's events too (visibilitychange,
  // DOMContentLoaded). They go when `signal` aborts.
  const options = { capture: true, signal }
  /** The page turned hidden or is going: a view still due is recorded, and what waits is sent. */
  const leaving = () => {
    hooks.beforeLeaving()
    delivery.sendLeaving()
  }
  addEventListener('online', delivery.wake, options)
  addEventListener('visibilitychange', () => (document.visibilityState == 'hidden' ? leaving() : delivery.send()), options)
  addEventListener(
    'pagehide',
    () => {
      leaving()
      outbox.suspend()
    },
    options
  )
  addEventListener(
    'pageshow',
    (event: PageTransitionEvent) => {
      if (!event.persisted) return
      hooks.restored()
      outbox.resume()
      delivery.resume()
    },
    options
  )
  signal.addEventListener('abort', delivery.stop)
  // What earlier pages left unsent goes first.
  delivery.adopt()
}
