// This script runs a product page. The server writes the product's id and price into the page's
// data block.
/* global cart, shelf */
const item = JSON.parse(document.getElementById('store-data').textContent).item
document.getElementById('add').addEventListener('click', () => {
  // The page's own button changes the cart (update-cart); add-to-cart is only for the service's widgets.
  cart.add({ item_id: item.id, variant_item_id: document.getElementById('variant').value, unit_price: item.price, quantity: 1 })
  document.getElementById('added').hidden = false
})
// A product page has two shelves, each a store: one viewed together, one bought together.
shelf('also-viewed', 'Shoppers who viewed this also viewed').emit('viewed', { item_id: item.id, limit: 6 })
shelf('also-bought', 'Shoppers who viewed this also bought').emit('bought', { item_id: item.id, limit: 6 })
