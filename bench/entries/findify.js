// Findify's analytics: the same SPEC events, the closest in purpose to ours.
import init from '@findify/analytics'

const analytics = init({ key: 'KEY' })
const click = (i) => analytics.sendEvent('click-item', { rid: 's-0b5d5b8a', item_id: 'item-' + i, variant_item_id: 'variant-' + i })
click(0)
globalThis.benchClick = click
