import { attempt } from './attempt'
import { feedbackError, reporter } from './error'
import { describe } from './rules'

/**
 * Whether `given` has the methods of a tracker that the entry function `caller` needs. When it
 * has not (left out, or a script-tag page's `discoveryFeedback.tracker` read before the tag had
 * loaded), the console says so, naming the function and what it got, and the function does
 * nothing: following a banner or a page for a tracker that is not there would fail unheard.
 */
export function givenTracker(caller: string, given: unknown, methods: string[]): boolean {
  const missing = methods.find((method) => typeof attempt(() => (given as Record<string, unknown>)[method]) != 'function')
  if (missing) reporter(undefined)(feedbackError(caller, 'tracker', 'must be a tracker, or an object with its ' + missing + '(), got ' + describe(given)))
  return !missing
}
