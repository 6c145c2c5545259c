// This script runs the cart page: the cart's lines with their quantities, its checkout form, and
// its shelf of recommendations.
/* global cart, discoveryFeedback, shelf */
// The server writes the title and price of every product into the page's data block.
const byId = JSON.parse(document.getElementById('store-data').textContent).products
function render() {
  const lines = cart.lines()
  const rows = document.getElementById('lines')
  rows.replaceChildren(
    ...lines.map((line) => {
      const row = document.createElement('tr')
      const name = document.createElement('td')
      name.textContent = byId[line.item_id].title + ' · ' + line.variant_item_id
      const quantity = document.createElement('td')
      for (const [label, change] of [
        ['−', -1],
        ['+', 1]
      ]) {
        const button = document.createElement('button')
        button.textContent = label
        button.className = change < 0 ? 'less' : 'more'
        button.onclick = () => {
          const next = cart.lines().map((other) => (other.variant_item_id == line.variant_item_id ? { ...other, quantity: other.quantity + change } : other))
          cart.save(next.filter((other) => other.quantity > 0))
          render()
        }
        quantity.append(button)
      }
      quantity.insertBefore(document.createTextNode(' ' + line.quantity + ' '), quantity.lastChild)
      const total = document.createElement('td')
      total.textContent = '€' + (line.unit_price * line.quantity).toFixed(2)
      row.append(name, quantity, total)
      return row
    })
  )
  document.getElementById('empty').hidden = lines.length > 0
  // Both checkouts, the store's and the Shopify-style one, need a cart.
  for (const button of document.querySelectorAll('#checkout, #checkout-shopify')) button.disabled = !lines.length
  document.querySelector('input[name=cart]').value = JSON.stringify(lines)
  recommend(lines)
}
// The cart's shelf is a store. It shows what is bought together with the cart's items, and what
// is trending while the cart is empty. The page asks again when the cart's items change, and a
// newer ask supersedes the older one. Its tiles are the service's widgets, with add-to-cart
// buttons (SPEC "Event kinds").
let asked
const cartShelf = shelf('shelf', 'Recommended for you', (item) => {
  const tile = document.createElement('div')
  tile.className = 'tile'
  tile.dataset.itemId = item.id
  tile.dataset.variantId = item.variants_ids[0] || item.id
  const img = document.createElement('img')
  img.src = item.image_url
  img.alt = ''
  const text = document.createElement('div')
  const title = document.createElement('b')
  title.textContent = item.title
  const price = document.createElement('span')
  price.className = 'price'
  price.textContent = '€' + item.price[0].toFixed(2)
  const button = document.createElement('button')
  button.className = 'shelf-add'
  button.textContent = 'Add to cart'
  text.append(title, price, button)
  tile.append(img, text)
  return tile
})
function recommend(lines) {
  const ids = [...new Set(lines.map((line) => line.item_id))]
  if (String(ids) == asked) return
  asked = String(ids)
  if (ids.length) cartShelf.emit('frequentlyPurchased', { item_ids: ids, limit: 4 })
  else cartShelf.emit('trending', { limit: 4 })
}
// SPEC asks for update-cart on the cart page, with the whole cart.
discoveryFeedback('update-cart', { line_items: cart.lines() })
render()
document.getElementById('shelf').addEventListener('click', (event) => {
  const button = event.target.closest('button.shelf-add')
  if (!button) return
  const { itemId, variantId } = button.closest('.tile').dataset
  // This is a widget of the service, so it sends add-to-cart. The client fills in its rid from the
  // answer that showed the item, and the library adds its click-item.
  discoveryFeedback('add-to-cart', { item_id: itemId, variant_item_id: variantId, quantity: 1 })
  cart.add({ item_id: itemId, variant_item_id: variantId, unit_price: byId[itemId].price, quantity: 1 })
  render()
})
