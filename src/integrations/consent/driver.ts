import { attempt } from '../../shared/attempt'
import type { Consent, ConsentTarget } from './types'

/**
 * How every adapter drives the tracker: each state passed on once (a banner that repeats itself
 * changes nothing), nothing after the adapter was stopped, and a target that throws (a page's
 * own wrapper around the command function) never throwing into the banner's code that called.
 */
export function consentDriver(tracker: ConsentTarget) {
  let last: Consent | undefined
  let stopped = false
  return {
    set(next: Consent) {
      if (stopped || next == last) return
      last = next
      // The tracker's methods never throw; another target's fault stays out of the banner's code.
      attempt(() => tracker.consent(next))
    },
    stop() {
      stopped = true
    },
    get stopped() {
      return stopped
    }
  }
}
