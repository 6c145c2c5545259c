// This script gives every page of the store its search box and its recommendation shelves, both
// through the discovery client. Their clicks are tracked without a rid in the code: the client
// fills in the rid of the response that showed the item.
/* global discoveryFeedback, discoveryFeedbackClient */
/* exported shelf */
// The server writes the store's API key into the page's data block.
const KEY = JSON.parse(document.getElementById('store-data').textContent).key
let client
const discovery = () => {
  if (!client) client = discoveryFeedbackClient.createClient({ key: KEY, baseUrl: '' })
  return client
}
const search = document.getElementById('search')
const results = document.getElementById('results')
const link = (item) => {
  const a = document.createElement('a')
  a.href = item.product_url
  a.dataset.dfItemId = item.id
  // Autocomplete items name no variants, so the product id stands for the variant until one is chosen.
  a.dataset.dfVariantId = (item.variants_ids && item.variants_ids[0]) || item.id
  const img = document.createElement('img')
  img.src = item.thumbnail_url
  img.alt = ''
  a.append(img, item.title)
  return a
}
search.addEventListener('input', () => {
  const q = search.value.trim()
  if (!q) return results.replaceChildren()
  discovery()
    .autocomplete({ q, suggestion_limit: 4, item_limit: 4 })
    .then(
      (answer) => {
        if (search.value.trim() != q) return
        results.replaceChildren(
          ...answer.suggestions.map((suggestion) => {
            const button = document.createElement('button')
            button.className = 'suggestion'
            button.textContent = '🔍 ' + suggestion.value
            button.onclick = () => {
              discoveryFeedback('click-suggestion', { suggestion: suggestion.value })
              search.value = suggestion.value
              search.dispatchEvent(new Event('input'))
            }
            return button
          }),
          ...answer.items.map(link)
        )
      },
      (error) => console.warn(error.message)
    )
})
// A recommendation shelf is filled by a store of the client, and every change of the store's
// state shows: a visible loading line, the tiles, or nothing when the service failed. `tile`
// builds one tile; by default it is a link whose data-df-* attributes track the click.
function shelf(id, title, tile = (item) => Object.assign(link(item), { className: 'tile' })) {
  const store = discoveryFeedbackClient.createRecommendations(discovery(), { onError: (error) => console.warn(error.message) })
  const holder = document.getElementById(id)
  if (!holder) return store
  const render = () => {
    const { status, items } = store.getState()
    const heading = document.createElement('h2')
    heading.textContent = title
    const body = document.createElement(items.length ? 'div' : 'p')
    if (items.length) {
      body.className = 'grid'
      body.append(...items.map(tile))
    } else body.textContent = status == 'loading' ? 'Loading recommendations…' : 'Nothing to recommend yet.'
    holder.setAttribute('aria-busy', status == 'loading')
    holder.replaceChildren(...(status == 'error' && !items.length ? [] : [heading, body]))
  }
  store.subscribe(render)
  render()
  return store
}
