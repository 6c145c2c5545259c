import { pageCommand, type PageCommand } from '../browser/command'
import type { Tracker } from '../browser/types'
import { attempt } from '../shared/attempt'
import { startBridge } from '../integrations/data-layer/bridge'
import { watchTracker, type DirectListener } from '../integrations/data-layer/direct'
import type { DataLayerOptions, Ga4EventName } from '../integrations/data-layer/types'
import { followViews } from '../integrations/data-layer/views'

/*
 * The GA4 data-layer bridge's script tag (dist/discovery-feedback-datalayer.min.js), next to
 * the tracker's tag (README "GA4 data layer"). Like the declarative add-on, it sends through
 * the page's command function, so its events queue in the stub until the tracker has loaded
 * and reach the same tracker after. Its options are its own data-* attributes:
 *   data-events="purchase,select_item"           the GA4 events to map (default all)
 *   data-auto-view-page="false"                  as the tracker's own option
 *   data-value-includes-tax-and-shipping="true"  GA4's value is the order's total ("false": Google's;
 *                                                left out, each purchase tells)
 *   data-data-layer="myDataLayer"                another data layer's global name
 * Faults go to the console, as the tracker's do.
 */

type Page = Window & Record<string, unknown> & { discoveryFeedback?: unknown; discoveryFeedbackDataLayer?: boolean }

/**
 * Calls `use` with the page's tracker the moment it exists: now, or when the tracker's script
 * creates it, which is before it replays the calls queued for it (browser/command.ts). The
 * script sets the global name to its command function, then sets the function's `tracker`:
 * each is watched with an accessor until that happens. A global the page declared with `var`
 * cannot take an accessor; the stub's queue then takes one instead, since the script reads the
 * queue after it has set the name and created a tracker from its data-* attributes.
 */
function whenTracker(page: Page, use: (tracker: Tracker) => void) {
  const isCommandFunction = (value: unknown): value is PageCommand => typeof value == 'function' && !!(value as PageCommand).createTracker
  const watchCommand = (command: PageCommand) => {
    if (command.tracker) return use(command.tracker)
    let current: Tracker | undefined
    Object.defineProperty(command, 'tracker', {
      configurable: true,
      enumerable: true,
      get: () => current,
      set(tracker: Tracker) {
        current = tracker
        // The script sets it inside init(), before it replays the calls queued for the tracker:
        // nothing thrown here may keep those from being replayed.
        attempt(() => use(tracker))
      }
    })
  }
  const command: unknown = page.discoveryFeedback
  // The tracker's script has run already.
  if (isCommandFunction(command)) return attempt(() => watchCommand(command))
  const stub = command as PageCommand
  let value: unknown = command
  const watchingName = attempt(() =>
    Object.defineProperty(page, 'discoveryFeedback', {
      configurable: true,
      enumerable: true,
      get: () => value,
      set(next: unknown) {
        value = next
        // Anything but the script's command function (the page's stub assigned again) is only kept.
        if (!isCommandFunction(next)) return
        // From now on the name is a plain property again.
        Object.defineProperty(page, 'discoveryFeedback', { configurable: true, enumerable: true, writable: true, value: next })
        attempt(() => watchCommand(next))
      }
    })
  )
  if (watchingName) return
  let queue = stub.q
  let found = false
  attempt(() =>
    Object.defineProperty(stub, 'q', {
      configurable: true,
      enumerable: true,
      get() {
        const current = page.discoveryFeedback
        if (!found && isCommandFunction(current)) {
          found = true
          attempt(() => watchCommand(current))
        }
        return queue
      },
      set(next) {
        queue = next
      }
    })
  )
}

;(() => {
  const page = window as unknown as Page
  // Loaded twice, it would track every event twice.
  if (page.discoveryFeedbackDataLayer) return
  page.discoveryFeedbackDataLayer = true
  const command = pageCommand(page)
  // The stub as it is now: its queue holds what the page tracked before the tracker loaded.
  const stub = command()
  const loadedAtStart = !!stub.tracker

  const data = document.currentScript?.dataset || {}
  // A bare attribute (data-value-includes-tax-and-shipping) counts as true, as in HTML.
  const on = (value: string | undefined) => value != null && value != 'false'
  const options: DataLayerOptions = {
    autoViewPage: data.autoViewPage == null || on(data.autoViewPage),
    // Left out, each purchase tells whether its value is the total (mapping.ts).
    valueIncludesTaxAndShipping: data.valueIncludesTaxAndShipping == null ? undefined : on(data.valueIncludesTaxAndShipping)
  }
  if (data.events) options.events = data.events.split(',').map((name) => name.trim()) as Ga4EventName[]
  if (data.dataLayer) options.dataLayer = (page[data.dataLayer] ??= []) as unknown[]

  // The tracker the bridge listens to, once it exists; until then, what the page tracks waits
  // in the stub's queue, and is heard when the tracker replays it.
  let listener: DirectListener | undefined
  let watched: Tracker | undefined
  const watch = (tracker: Tracker | undefined) => {
    if (!listener || !tracker || tracker == watched) return
    watched = tracker
    watchTracker(tracker, listener)
  }
  const find = () => watch(command().tracker)

  startBridge(
    {
      track(event, properties) {
        find()
        command()(event, properties)
      }
    },
    options,
    (signal) => {
      // A tracker that loaded before this file may have sent the page's view-page already,
      // unless the page is still being parsed: its first view waits for DOMContentLoaded.
      const views = followViews({ automatic: options.autoViewPage!, viewedAlready: loadedAtStart && document.readyState != 'loading' }, signal)
      // The URL of the view-page this file queued while the tracker had not loaded.
      let queuedUrl: string | undefined
      return {
        views: {
          firstView(url) {
            find()
            if (watched) return views.firstView(url)
            // The tracker has not loaded: its view-page goes after the calls queued for it, so a
            // view-page queued now is the page's first, unless one is queued already.
            return url != queuedUrl && !Array.from(stub.q || []).some((call) => call[0] == 'view-page')
          },
          viewed(url, source) {
            views.viewed(url, source)
            if (!watched) queuedUrl = url
          },
          repeatsBridge: (url) => views.repeatsBridge(url)
        },
        onDirect(next) {
          listener = next
          find()
          whenTracker(page, watch)
        },
        queued: () => !command().tracker
      }
    }
  )
})()
