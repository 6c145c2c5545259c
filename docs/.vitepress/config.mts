import { defineConfig } from 'vitepress'

// The site of discovery-feedback: the guides and references under docs/, and the API reference
// that scripts/docs.mjs generates into docs/api/ from the built declarations' TSDoc.

const guides = [
  ['Script tag', '/guide/script-tag'],
  ['ES module and frameworks', '/guide/es-module'],
  ['Checkout templates and the server sender', '/guide/checkout-and-server'],
  ['Orders the browser never reported', '/guide/order-webhooks'],
  ['Shopify', '/guide/shopify'],
  ['Tag managers and consent banners', '/guide/consent-banners'],
  ['GA4 data layer', '/guide/ga4-data-layer'],
  ['Discovery client and stores', '/guide/discovery-client'],
  ['First-party relay', '/guide/relay'],
  ['The demo and the inspector', '/guide/inspector'],
  ['Extending the tracker', '/guide/extending']
]
const references = [
  ['Options', '/reference/options'],
  ['Wire format', '/reference/wire-format'],
  ['Collector protocol', '/reference/collector-protocol'],
  ['Delivery guarantees', '/reference/delivery'],
  ['Privacy and consent', '/reference/privacy'],
  ['Browsers and hostile pages', '/reference/browsers'],
  ['Benchmarks', '/reference/benchmarks']
]
// One API page per package entry, as API Documenter names them.
const entries = ['discovery-feedback', 'client', 'server', 'shopify', 'relay', 'collector']
const items = (pages: string[][]) => pages.map(([text, link]) => ({ text, link }))

export default defineConfig({
  title: 'discovery-feedback',
  description: 'Analytics events for a product-discovery service, from a shop’s pages to your collector.',
  cleanUrls: true,
  lastUpdated: false,
  // Text such as `{ name: string; url: string; }` in the API pages is a type, not attributes.
  markdown: { attrs: { disable: true } },
  themeConfig: {
    nav: [
      { text: 'Guides', link: '/guide/script-tag' },
      { text: 'Reference', link: '/reference/options' },
      { text: 'API', link: '/api/' },
      { text: 'Contributing', link: '/contributing' },
      { text: 'Changelog', link: '/changelog' }
    ],
    sidebar: [
      { text: 'Guides', items: items(guides) },
      { text: 'Reference', items: items(references) },
      { text: 'API', collapsed: true, items: entries.map((entry) => ({ text: entry == 'discovery-feedback' ? entry : 'discovery-feedback/' + entry, link: '/api/' + entry })) },
      { text: 'Project', items: items([['Contributing', '/contributing'], ['Changelog', '/changelog']]) }
    ],
    outline: { level: [2, 3] },
    search: { provider: 'local' }
  }
})
