import { feedbackError, thrownText } from '../shared/error'
import type { EventName, FeedbackError, Outcome } from '../shared/types'
import type { Addon, Consent } from './types'

/**
 * The add-ons plugged into one tracker (docs/guide/extending.md), called in the order they
 * were added. An add-on is the page's code: a hook that throws is reported and passed over, so
 * neither the event nor the page pays for it.
 */
export function createAddons(report: (error: FeedbackError) => void) {
  const addons = new Set<Addon>()

  const hear = (addon: Addon, call: (addon: Addon) => void) => {
    try {
      call(addon)
    } catch (caught) {
      report(feedbackError(undefined, undefined, 'an add-on failed: ' + thrownText(caught)))
    }
  }
  const each = (call: (addon: Addon) => void) => addons.forEach((addon) => hear(addon, call))

  return {
    /** Adds one, which hears at once the view and the consent the others heard last; returns its removal. */
    add(addon: Addon, lastView: string | undefined, consent: Consent) {
      if (!addon || typeof addon != 'object') throw feedbackError('use', 'addon', 'must be an object')
      addons.add(addon)
      hear(addon, () => {
        addon.view?.(lastView)
        addon.consent?.(consent)
      })
      return () => {
        addons.delete(addon)
      }
    },
    /** The properties to record once every add-on had its say, or undefined when one dropped the event. */
    change(event: EventName, properties: unknown): { properties: unknown } | undefined {
      let dropped = false
      each((addon) => {
        if (dropped || !addon.event) return
        const changed = addon.event(event, properties)
        if (changed === false) dropped = true
        else if (changed !== undefined) properties = changed
      })
      return dropped ? undefined : { properties }
    },
    /** What became of an event: taken when `error` is undefined. Each add-on hears a copy, which it may change without changing what the others or the tracker read. */
    outcome: (outcome: Outcome) => each((addon) => addon.outcome?.({ ...outcome })),
    view: (url: string | undefined) => each((addon) => addon.view?.(url)),
    consent: (state: Consent) => each((addon) => addon.consent?.(state))
  }
}
