import { addonsFirst, createCommandFunction, type Call } from '../browser/command'
import { optionsFromDataset, warn } from '../browser/data-options'
import { createTracker } from '../browser/tracker'
import type { TrackerOptions } from '../browser/types'

/*
 * The tracker's script tag (dist/discovery-feedback.min.js). The page's stub (docs/guide/script-tag.md)
 * queues calls in `discoveryFeedback.q` until this file runs. Here the command function
 * takes the global name, the tracker is created from the script's own data-* attributes (or a
 * queued 'init'), and every queued call is replayed: the add-ons' 'use' first, the rest in order. The queue's array is never
 * patched: a page that kept a reference to the stub goes through the global name, now ours.
 */

// How long a page may take to call 'init' itself before it hears that nothing is tracked.
const NO_TRACKER_AFTER = 3000

/** What the page may hold under the global name: the stub, an earlier copy of ours, or anything else. */
interface Stub {
  q?: ArrayLike<ArrayLike<unknown>>
  createTracker?: unknown
}

;(() => {
  const page = window as Window & { discoveryFeedback?: unknown }
  // Not a function: no stub, or an element whose id the browser exposes under that name.
  const stub = (typeof page.discoveryFeedback == 'function' ? page.discoveryFeedback : {}) as Stub
  // Loaded twice: the first copy owns the page, a second tracker would double every event.
  if (stub.createTracker) return
  const discoveryFeedback = createCommandFunction(createTracker)
  page.discoveryFeedback = discoveryFeedback
  // The options of the script's own data-* attributes; none where the browser does not say
  // which script runs (a module, or a copy run by other code).
  const dataset = document.currentScript?.dataset
  const options = dataset ? optionsFromDataset(dataset) : {}
  // The tracker checks that the endpoint is there too, as it checks any options.
  if (options.key) discoveryFeedback('init', options as TrackerOptions)
  // Without data-key the tracker waits for a queued or later 'init'. A page still without one
  // after a few seconds most likely lost its key (a typo, a template that left it empty): its
  // calls wait unheard, and its view-pages are lost.
  else setTimeout(() => discoveryFeedback.tracker || warn('no data-key: nothing is tracked'), NO_TRACKER_AFTER)
  // Array.from with one argument only: Prototype.js replaces it with a version that takes no map function.
  const queued = Array.from(stub.q || []).map((args) => Array.from(args || []) as Call)
  for (const args of addonsFirst(queued)) discoveryFeedback(...args)
})()
