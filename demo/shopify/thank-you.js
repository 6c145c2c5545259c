// This script runs the demo's Shopify-style thank-you page. It does what Shopify's pixel manager
// does there: it starts the merchant's custom pixel in the lax sandbox, then publishes the page's
// page_viewed and the order's checkout_completed. The server writes the pixel's code and the
// checkout into the page's data block.
/* global console, document, localStorage */
import { startPixelHost } from './host.js'

const { code, checkout } = JSON.parse(document.getElementById('pixel-data').textContent)
// The order is placed, so the storefront's cart is empty again, as after the store's own checkout.
localStorage.removeItem('demo-cart')
const host = startPixelHost({ sandbox: 'lax', code, onError: (message) => console.error('custom pixel:', message) })
host.publish('page_viewed', {})
host.publish('checkout_completed', { checkout })
