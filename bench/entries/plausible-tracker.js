// Plausible's custom event with properties.
import Plausible from 'plausible-tracker'

const { trackEvent } = Plausible({ domain: 'shop.example', apiHost: 'https://collector.example' })
const click = (i) => trackEvent('click-item', { props: { item_id: 'item-' + i, variant_item_id: 'variant-' + i } })
click(0)
globalThis.benchClick = click
