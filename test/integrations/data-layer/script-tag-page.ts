import { vi } from 'vitest'
import type { CommandFunction } from '../../../src/index'
import { ENDPOINT, type network } from '../../support/helpers'
import { runScriptTag } from '../../support/script-tags'

// A page in jsdom running the script tags as a browser runs files: the README's stub, the
// tracker's file and the data-layer add-on, each with its data-* attributes.

export const page = window as unknown as { discoveryFeedback?: any; discoveryFeedbackDataLayer?: boolean; dataLayer?: unknown[] }
export const shirt = { item_id: 'SKU-1', price: 20 }

export const loadTracker = () => runScriptTag('tracker', { key: 'KEY', endpoint: ENDPOINT })
export const command = () => page.discoveryFeedback as CommandFunction & ((...args: unknown[]) => void)

/** The events sent, once the page has had time for its view and a flush: event and item_id. */
export async function sent(net: ReturnType<typeof network>) {
  vi.advanceTimersByTime(50)
  await command().tracker!.flush()
  return net.events().map((event) => [event.event, (event.properties as { item_id?: string }).item_id])
}

/** The same click through the page's own call and through the data layer's select_item, then what was sent. */
export function clickBothWays(net: ReturnType<typeof network>) {
  command()('click-item', { item_id: 'SKU-1', variant_item_id: 'SKU-1' })
  page.dataLayer!.push({ event: 'select_item', ecommerce: { items: [shirt] } })
  return sent(net)
}

/** What a page whose one click went out once, with its automatic view-page, has sent. */
export const ONE_CLICK_AND_THE_VIEW = [
  ['click-item', 'SKU-1'],
  ['view-page', undefined]
]
