// This is the client-side cart that every page of the store shares. It keeps its lines in
// localStorage, and every change sends update-cart with the whole cart (SPEC "Event kinds").
/* global discoveryFeedback */
/* exported cart */
const cart = {
  lines: () => JSON.parse(localStorage.getItem('demo-cart') || '[]'),
  save(lines) {
    localStorage.setItem('demo-cart', JSON.stringify(lines))
    discoveryFeedback('update-cart', { line_items: lines })
    cart.count()
  },
  add(line) {
    const lines = cart.lines()
    const same = lines.find((other) => other.variant_item_id == line.variant_item_id)
    if (same) same.quantity += line.quantity
    else lines.push(line)
    cart.save(lines)
  },
  count() {
    const count = cart.lines().reduce((sum, line) => sum + line.quantity, 0)
    document.getElementById('cart-count').textContent = count ? '(' + count + ')' : ''
  }
}
cart.count()
