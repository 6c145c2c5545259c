import { pageCommand } from '../browser/command'
import { bridgeDataLayer } from '../integrations/data-layer/bridge'
import type { DataLayerOptions, Ga4EventName } from '../integrations/data-layer/types'

/*
 * The GA4 data-layer bridge's script tag (dist/discovery-feedback-datalayer.min.js), next to
 * the tracker's tag (docs/guide/ga4-data-layer.md). Like the declarative add-on, it sends through
 * the page's command function, so its events queue in the stub until the tracker has loaded
 * and reach the same tracker after. It finds the tracker the one way the command function
 * offers: `discoveryFeedback('use', addon)`, which the tracker takes at once if it exists, or
 * replays before the calls queued with it (docs/guide/extending.md), so the bridge hears
 * the page's own calls from the first. Its options are its own data-* attributes:
 *   data-events="purchase,select_item"           the GA4 events to map (default all)
 *   data-value-includes-tax-and-shipping="true"  GA4's value is the order's total ("false": Google's;
 *                                                left out, each purchase tells)
 *   data-data-layer="myDataLayer"                another data layer's global name
 * Faults go to the console, as the tracker's do.
 */

/** What the page's window holds for this file: its own mark and the tracker's command function. */
type Page = Window & { discoveryFeedbackDataLayer?: boolean; discoveryFeedback?: unknown }

/** The array under the global name the page chose for its data layer, created if there is none yet. */
function namedDataLayer(name: string): unknown[] {
  if (Reflect.get(window, name) == null) Reflect.set(window, name, [])
  return Reflect.get(window, name)
}

;(() => {
  const page: Page = window
  // Loaded twice, it would track every event twice.
  if (page.discoveryFeedbackDataLayer) return
  page.discoveryFeedbackDataLayer = true
  const command = pageCommand(page)

  const data = document.currentScript?.dataset || {}
  // A bare attribute (data-value-includes-tax-and-shipping) counts as true, as in HTML.
  const on = (value: string | undefined) => value != null && value != 'false'
  const options: DataLayerOptions = {
    // Left out, each purchase tells whether its value is the total (mapping.ts).
    valueIncludesTaxAndShipping: data.valueIncludesTaxAndShipping == null ? undefined : on(data.valueIncludesTaxAndShipping)
  }
  if (data.events) options.events = data.events.split(',').map((name) => name.trim()) as Ga4EventName[]
  if (data.dataLayer) options.dataLayer = namedDataLayer(data.dataLayer)

  // The script tag's bridge never stops: the add-on stays for the page's life.
  bridgeDataLayer(
    {
      track: (event, properties) => command()(event, properties),
      use(addon) {
        command()('use', addon)
        return () => {}
      }
    },
    options
  )
})()
