import { trackDeclarative } from '../browser/declarative'

/*
 * The script-tag add-on for tracking without code (dist/discovery-feedback-declarative.min.js),
 * next to the tracker's tag, in either order. It sends through the page's command function, so
 * its events queue in the stub until the tracker has loaded and reach the same tracker after.
 * The function is looked up on every call: a stub captured early would queue into an array
 * that nobody reads once the tracker has replaced it.
 */

/** The README's stub, or the tracker's command function once it has loaded. */
type Command = ((...args: unknown[]) => void) & { q?: ArrayLike<unknown>[] }
;(() => {
  const page = window as Window & { discoveryFeedback?: unknown; discoveryFeedbackDeclarative?: boolean }
  // Loaded twice, it would send every click twice.
  if (page.discoveryFeedbackDeclarative) return
  page.discoveryFeedbackDeclarative = true
  // The README's stub, for a page that has none yet (or whose global is taken by something else).
  if (typeof page.discoveryFeedback != 'function') {
    const stub: Command = function () {
      // eslint-disable-next-line prefer-rest-params -- the stub keeps `arguments` objects, as the README's does
      ;(stub.q ||= []).push(arguments)
    }
    page.discoveryFeedback = stub
  }
  trackDeclarative({ track: (event, properties) => (page.discoveryFeedback as Command)(event, properties) })
})()
