// This script runs the home page. The listing is the shop's own, not a service response, so its
// click-item goes without a rid (SPEC).
/* global discoveryFeedback, shelf */
document.querySelector('.grid').addEventListener('click', (event) => {
  const link = event.target.closest('a.tile')
  if (link) discoveryFeedback('click-item', { item_id: link.dataset.itemId, variant_item_id: link.dataset.variantId })
})
shelf('newest', 'Newest').emit('newest', { limit: 6 })
