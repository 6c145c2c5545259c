// Ours, as an app imports it: create the tracker, send one click.
import { createTracker } from '../../dist/index.mjs'

const tracker = createTracker({ key: 'KEY', endpoint: 'https://collector.example/v3/feedback', autoViewPage: false })
const click = (i) => tracker.clickItem({ rid: 's-0b5d5b8a', item_id: 'item-' + i, variant_item_id: 'variant-' + i })
click(0)
globalThis.benchClick = click
globalThis.benchCreateTracker = createTracker
