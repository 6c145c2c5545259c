/** Adds a capturing listener that goes when `signal` aborts: a page stopping propagation cannot hide the event from us. */
export const listen = (target: EventTarget, type: string, listener: (event: any) => unknown, signal: AbortSignal) =>
  target.addEventListener(type, listener, { capture: true, signal })

/** Calls back when the page comes back from the back/forward cache: to the shopper, a new page view. */
export const onRestore = (callback: () => void, signal: AbortSignal) =>
  listen(window, 'pageshow', (event: PageTransitionEvent) => event.persisted && callback(), signal)
