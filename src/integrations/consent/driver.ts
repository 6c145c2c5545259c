import { attempt } from '../../shared/attempt'
import type { Consent, ConsentTarget } from './types'

/**
 * How every adapter drives the tracker: each state passed on once (a banner that repeats itself
 * changes nothing), nothing after the adapter was stopped, and a target that throws (a page's
 * own wrapper around the command function) never throwing into the banner's code that called.
 *
 * "Once" is measured against the tracker's own state, which its `consent` hook tells
 * (docs/guide/extending.md): the shop may set consent itself, and a banner that then says again
 * what it said before must still be heard. Otherwise a shop's own "deny" followed by the
 * shopper granting again in the banner would leave the tracker denied, and a shop's own
 * "grant" followed by the shopper withdrawing would leave it sending. A target without `use`
 * (a page's wrapper) is compared with the last state this driver set, as nothing else is known.
 */
export function consentDriver(tracker: ConsentTarget) {
  let last: Consent | undefined
  let stopped = false
  // The tracker tells its state at once, and again at each change, whoever made it.
  const remove = attempt(() => tracker.use?.({ consent: (state) => void (last = state) }))
  return {
    set(next: Consent) {
      if (stopped || next == last) return
      last = next
      // The tracker's methods never throw; another target's fault stays out of the banner's code.
      attempt(() => tracker.consent(next))
    },
    /** Stops passing states on, and the tracker's hook goes with it. */
    stop() {
      stopped = true
      attempt(() => remove?.())
    },
    get stopped() {
      return stopped
    }
  }
}
