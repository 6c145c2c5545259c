// Algolia's click-after-search event, the nearest match to our click-item.
import aa from 'search-insights'

aa('init', { appId: 'APPID', apiKey: 'KEY', useCookie: true })
const click = (i) =>
  aa('clickedObjectIDsAfterSearch', {
    eventName: 'Item clicked',
    index: 'products',
    queryID: '0b5d5b8a0b5d5b8a0b5d5b8a0b5d5b8a',
    objectIDs: ['item-' + i],
    positions: [1]
  })
click(0)
globalThis.benchClick = click
