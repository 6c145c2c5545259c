// This module runs the SPA: an app that imports the ES module, whose routes change with
// history.pushState. The library sends one view-page per route by itself.
import { createTracker } from 'discovery-feedback'

// The server writes the tracker's key and endpoint into the page's data block.
const { key, endpoint } = JSON.parse(document.getElementById('store-data').textContent)
window.tracker = createTracker({ key, endpoint })
const routes = {
  '/spa': ['Start', 'A single-page app: routes change with history.pushState, no page loads.'],
  '/spa/new': ['New arrivals', 'Fresh in this week.'],
  '/spa/sale': ['Sale', 'Up to 40% off.'],
  '/spa/about': ['About', 'This page is rendered in the browser.']
}
function render() {
  const [title, text] = routes[location.pathname] || ['Not found', 'No such route.']
  const heading = document.createElement('h1')
  heading.textContent = title
  const paragraph = document.createElement('p')
  paragraph.textContent = text
  document.getElementById('app').replaceChildren(heading, paragraph)
}
document.addEventListener('click', (event) => {
  const link = event.target.closest('a[data-route]')
  if (!link) return
  event.preventDefault()
  history.pushState(null, '', link.href)
  render()
})
addEventListener('popstate', render)
render()
