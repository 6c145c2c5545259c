import { pageCommand } from '../browser/command'
import { followDeclarative } from '../browser/declarative'

/*
 * The script-tag add-on for tracking without code (dist/discovery-feedback-declarative.min.js),
 * next to the tracker's tag, in either order. It sends through the page's command function, so
 * its events queue in the stub until the tracker has loaded and reach the same tracker after.
 */
;(() => {
  const page = window as Window & { discoveryFeedback?: unknown; discoveryFeedbackDeclarative?: boolean }
  // Loaded twice, it would send every click twice.
  if (page.discoveryFeedbackDeclarative) return
  page.discoveryFeedbackDeclarative = true
  const command = pageCommand(page)
  followDeclarative({ track: (event, properties) => command()(event, properties) })
})()
