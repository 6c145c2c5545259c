import { trackDeclarative } from './browser/declarative'

/*
 * Script-tag add-on for tracking without code: `<script async src="discovery-feedback-declarative.min.js">`
 * next to the tracker's tag, in either order. It sends through the page's command function, so
 * its events queue in the stub until the tracker has loaded and reach the same tracker after.
 * The function is looked up on every call: a stub captured early would queue into an array that
 * nobody reads once the tracker has replaced it.
 */
;(() => {
  const global = window as any
  // Loaded twice, it would send every click twice.
  if (global.discoveryFeedbackDeclarative) return
  global.discoveryFeedbackDeclarative = true
  // The README's stub, for a page that has none yet (or whose global is taken by something else).
  if (typeof global.discoveryFeedback != 'function')
    global.discoveryFeedback = function () {
      ;(global.discoveryFeedback.q ||= []).push(arguments)
    }
  trackDeclarative({ track: (event, properties) => global.discoveryFeedback(event, properties) })
})()
