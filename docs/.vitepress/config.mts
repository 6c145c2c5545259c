import { dirname, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitepress'
import { SITE_PAGES } from './site-pages.mjs'

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

const repository = fileURLToPath(new URL('../..', import.meta.url))

/**
 * Where a page's link leads on the site: a link to a file the site shows as a page of its own
 * (site-pages.mjs) leads to that page, its anchor kept; any other link is left as written.
 */
function onTheSite(href: string, page: string) {
  if (/^([a-z]+:|\/|#)/i.test(href)) return href
  const [path, anchor] = href.split('#')
  const shown = SITE_PAGES[relative(repository, resolve(dirname(page), path)).replaceAll('\\', '/') as keyof typeof SITE_PAGES]
  return shown ? shown + (anchor ? '#' + anchor : '') : href
}

export default defineConfig({
  title: 'discovery-feedback',
  description: 'Analytics events for a product-discovery service, from a shop’s pages to your collector.',
  cleanUrls: true,
  lastUpdated: false,
  // Text such as `{ name: string; url: string; }` in the API pages is a type, not attributes.
  markdown: {
    attrs: { disable: true },
    config(md) {
      const linkOpen = md.renderer.rules.link_open!
      md.renderer.rules.link_open = (tokens, index, options, env, self) => {
        const href = tokens[index].attrGet('href')
        if (href) tokens[index].attrSet('href', onTheSite(href, env.path))
        return linkOpen(tokens, index, options, env, self)
      }
    }
  },
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
