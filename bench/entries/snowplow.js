// Snowplow's structured event, its lightest way to record a click.
import { newTracker, trackStructEvent } from '@snowplow/browser-tracker'

newTracker('sp', 'https://collector.example', { appId: 'shop', plugins: [] })
const click = (i) => trackStructEvent({ category: 'product', action: 'click-item', label: 'item-' + i, property: 'variant-' + i })
click(0)
globalThis.benchClick = click
