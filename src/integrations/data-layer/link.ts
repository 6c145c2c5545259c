import type { Addon } from '../../browser/types'
import { attempt } from '../../shared/attempt'
import type { EventName, EventProperties, FeedbackError } from '../../shared/types'
import type { TabCart } from './cart'
import { createEchoes } from './echoes'
import type { BridgeTarget } from './types'
import { createViews, lateView, type Views } from './views'

/*
 * The bridge's link to the tracker: what it sends through `track`, and what it hears as an add-on
 * (docs/guide/extending.md): each event before the rules, which it may drop as an echo of
 * its own; whether the tracker took it; the URL of the view-page counted last; the consent.
 */

// Marks the bridge's own events, so that it knows them when they come back to its add-on: a
// symbol, which the rules do not copy (nothing of it is sent), which no loop of the page sees,
// and which stays on the copy the tracker makes of a view-page to complete it.
const OWN = Symbol()

const isOwn = (properties: unknown) => !!attempt(() => (properties as Record<symbol, unknown>)[OWN])

/** The URL a view-page was tracked for: the one it names, or the page's. */
const urlOf = (properties: unknown) => {
  const url = attempt(() => (properties as { url?: unknown }).url)
  return typeof url == 'string' ? url : location.href
}

export interface TrackerLink {
  /** The account of view-pages (views.ts). */
  views: Views
  /** Sends one of the bridge's events, unless it repeats the shop's own (echoes.ts). */
  send<E extends EventName>(event: E, properties: EventProperties[E]): void
}

/**
 * Links the bridge to `target` until `signal` aborts, which removes its add-on. Until the tracker
 * has taken the add-on (a script-tag tracker not loaded yet), what the bridge sends waits in the
 * script tag's queue, behind the add-on: the tracker replays the add-ons first.
 */
export function linkTracker(target: BridgeTarget, cart: TabCart, report: (error: FeedbackError) => void, signal: AbortSignal): TrackerLink {
  const views = createViews()
  const echoes = createEchoes()
  // The tracker told the add-on the view it counted last, as it does at once when it takes one.
  let heard = false
  // The shop's event that the add-on let through, whose outcome the tracker tells next.
  let shops: EventName | undefined

  const addon: Addon = {
    event(event, properties) {
      shops = undefined
      if (isOwn(properties)) {
        // Replayed from the script tag's queue: its echo window starts now.
        echoes.replayed(event, properties)
        if (event != 'view-page' || !views.arrived(urlOf(properties))) return
        report(lateView())
        return false
      }
      // The first of two view-pages of one page wins, as the first of two clicks does.
      if (event == 'view-page' ? views.repeatsBridge(urlOf(properties)) : echoes.isEcho(event, properties, 'shop')) return false
      shops = event
    },
    // Only what the tracker took counts: a click it refused (a tile without its variant id) was
    // never tracked, and must not keep the bridge's own from going.
    outcome({ event, properties, error }) {
      if (!error && event == shops) echoes.record(event, properties, 'shop')
      shops = undefined
    },
    view(url) {
      heard = true
      views.told(url)
    },
    consent(state) {
      if (state == 'denied') cart.forgetStored()
    }
  }
  const remove = target.use(addon)
  signal.addEventListener('abort', () => attempt(remove))

  return {
    views,
    send(event, properties) {
      // Stopped while this entry was read (by an onError that stops the bridge): nothing more goes.
      if (signal.aborted || echoes.isEcho(event, properties, 'bridge')) return
      ;(properties as Record<symbol, unknown>)[OWN] = true
      echoes.record(event, properties, 'bridge', !heard)
      if (event == 'view-page') views.sent(urlOf(properties))
      target.track(event, properties)
    }
  }
}
