import { createAddons } from '../../../src/browser/addons'
import type { Addon, Consent } from '../../../src/browser/types'
import { asFeedbackError, feedbackError } from '../../../src/shared/error'
import { followPageViews } from '../../../src/shared/page-views'
import { validate } from '../../../src/shared/rules'
import type { EventName } from '../../../src/shared/types'

// A tracker for the bridge's unit tests that records what it takes instead of sending it, and
// keeps the add-on contract as the real one does (docs/guide/extending.md): each event
// goes through the add-ons, SPEC's rules (a refused one throws, so that the bridge reports it),
// then the outcome; the add-ons hear the view-page counted last and the consent.

type Spy = (properties: unknown) => void

/** The shop's own calls of the helpers: each spy hears the properties of a call the tracker took, as the shop passed them. */
export interface HelperSpies {
  clickItem?: Spy
  updateCart?: Spy
  viewPage?: Spy
  consent?: (state: Consent) => void
}

// Each recording tracker's automatic view-pages, until the test ends.
const lives: AbortController[] = []

/** Ends the automatic view-pages of the recording trackers made so far. */
export const endRecordingTrackers = () => lives.splice(0).forEach((life) => life.abort())

/**
 * `events` holds what came through `track`; the helpers' calls go to their spies. With
 * `autoViewPage` (default true) it counts a view-page of each page and route one task after it
 * appears, as the real tracker's timing (shared/page-views.ts) has it, and again after a
 * back/forward-cache restore; those views are told to the add-ons and recorded nowhere.
 */
export function recordingTracker(spies: HelperSpies = {}, { autoViewPage = true } = {}) {
  const events: { event: EventName; properties: Record<string, unknown> }[] = []
  const addons = createAddons(() => {})
  let lastUrl: string | undefined
  let consent: Consent = 'granted'

  const record = (event: EventName, input: unknown, taken: (properties: Record<string, unknown>) => void) => {
    if (event == 'view-page') input = { url: location.href, ref: '', width: 1, height: 1, ...(input as object) }
    const changed = addons.change(event, input)
    if (!changed) return addons.outcome({ event, properties: input, error: feedbackError(event, undefined, 'dropped by an add-on') })
    let properties
    try {
      properties = validate(event, changed.properties)
    } catch (caught) {
      addons.outcome({ event, properties: changed.properties, error: asFeedbackError(caught) })
      throw caught
    }
    taken(properties)
    addons.outcome({ event, properties })
    if (event == 'view-page') addons.view((lastUrl = properties.url as string))
  }
  const helper = (event: EventName, spy: Spy | undefined) => (properties: unknown) => record(event, properties, () => spy?.(properties))

  if (autoViewPage) {
    const life = new AbortController()
    lives.push(life)
    const view = () => {
      if (location.href != lastUrl) addons.view((lastUrl = location.href))
    }
    const pageViews = followPageViews(view, life.signal)
    addEventListener(
      'pageshow',
      (event) => {
        if (!event.persisted) return
        addons.view((lastUrl = undefined))
        pageViews.restored()
      },
      { signal: life.signal }
    )
  }

  return {
    events,
    track(event: EventName, properties: unknown) {
      record(event, properties, (taken) => events.push({ event, properties: taken }))
    },
    clickItem: helper('click-item', spies.clickItem),
    updateCart: helper('update-cart', spies.updateCart),
    viewPage: helper('view-page', spies.viewPage),
    consent(state: Consent) {
      consent = state
      spies.consent?.(state)
      addons.consent(state)
    },
    use: (addon: Addon) => addons.add(addon, lastUrl, consent)
  }
}
