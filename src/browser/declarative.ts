import type { EventProperties } from '../shared/types'
import { givenTracker } from '../shared/given-tracker'
import type { Tracker } from './types'

/*
 * Tracking without code, for script-tag pages. Attribute values are data, read with
 * dataset and JSON.parse, never evaluated:
 *   <a data-df-item-id="42" data-df-variant-id="421" data-df-rid="s-…">      click-item on click
 *   <button data-df-add-to-cart data-df-quantity="2"> inside such a tile        add-to-cart instead
 *   <script type="application/json" data-df-purchase>{…}</script>               purchase on load
 *   <script type="application/json" data-df-cart>{"line_items": […]}</script>   update-cart on load
 * The rid may sit on the element or any ancestor, e.g. once on a shelf. Only `track` is
 * needed, so the script-tag add-on can hand in the page's command function instead of a tracker.
 */

const attribute = (element: Element, name: string) => {
  const holder = element.closest('[data-df-' + name + ']') as HTMLElement | null
  return holder ? holder.getAttribute('data-df-' + name)! : undefined
}

/** Starts declarative tracking for `tracker`, which has its `track()`; returns the function that stops it. */
export function followDeclarative(tracker: Pick<Tracker, 'track'>): () => void {
  // One listener for the whole document: it sees clicks on child elements and on tiles added
  // later. Capture phase, so a page that stops propagation still gets its click tracked.
  const onClick = (event: Event) => {
    const target = event.target
    const tile = target instanceof Element && target.closest('[data-df-item-id]')
    if (!tile) return
    const properties = {
      item_id: attribute(tile, 'item-id')!,
      variant_item_id: attribute(tile, 'variant-id')!,
      rid: attribute(tile, 'rid')
    }
    const button = (target as Element).closest('[data-df-add-to-cart]')
    if (button && tile.contains(button)) {
      tracker.track('add-to-cart', { ...properties, rid: properties.rid!, quantity: Number(attribute(button, 'quantity') || 1) })
    } else tracker.track('click-item', properties)
  }
  const readBlocks = () => {
    for (const [selector, event] of [
      ['purchase', 'purchase'],
      ['cart', 'update-cart']
    ] as const) {
      document.querySelectorAll<HTMLScriptElement>('script[type="application/json"][data-df-' + selector + ']:not([data-df-sent])').forEach((block) => {
        block.setAttribute('data-df-sent', '')
        let data: unknown
        try {
          data = JSON.parse(block.textContent || '')
        } catch {
          // The tracker reports it, naming the event.
          data = 'not JSON'
        }
        // The page's data, as the page wrote it: the tracker's rules check it.
        tracker.track(event, data as EventProperties[typeof event])
      })
    }
  }
  document.addEventListener('click', onClick, true)
  if (document.readyState == 'loading') document.addEventListener('DOMContentLoaded', readBlocks, { once: true })
  else readBlocks()
  return () => {
    document.removeEventListener('click', onClick, true)
    document.removeEventListener('DOMContentLoaded', readBlocks)
  }
}

/**
 * Starts declarative tracking; returns the function that stops it.
 * @param tracker - The tracker, or any object with its `track()`.
 */
export function trackDeclarative(tracker: Pick<Tracker, 'track'>): () => void {
  return givenTracker('trackDeclarative', tracker, ['track']) ? followDeclarative(tracker) : () => {}
}
