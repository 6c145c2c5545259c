// @vitest-environment node
import { rmSync, writeFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { checkLinks } from '../../scripts/doc-links.mjs'

// The docs build (npm run docs) stops on what checkLinks finds: every link of a docs page must
// work where the page is read as Markdown, in the repository, and on the site.

describe('links of the docs pages', () => {
  it('all resolve in the repository and on the site', async () => {
    expect(await checkLinks()).toEqual([])
  })

  it('are refused when site-absolute, missing, off the site, or to a heading that is not there', async () => {
    const page = new URL('../../docs/reference/links-under-test.md', import.meta.url).pathname
    writeFileSync(
      page,
      '# Links\n\n[a](/reference/delivery) [b](nothing.md) [c](delivery.md#no-such-heading) [d](../../src/index.ts) ' +
        '[fine](options.md#identity) [also fine](../../schema/envelope.json) [and this](../../bench/README.md#how-it-is-measured)\n'
    )
    try {
      expect(await checkLinks([page])).toEqual([
        'docs/reference/links-under-test.md: /reference/delivery: site-absolute: it leads nowhere in the repository; write it relative to the page, such as ../reference/delivery.md',
        'docs/reference/links-under-test.md: nothing.md: no such file in the repository',
        'docs/reference/links-under-test.md: delivery.md#no-such-heading: no heading with this anchor on that page',
        'docs/reference/links-under-test.md: ../../src/index.ts: outside docs/, and the site has no page for it (docs/.vitepress/site-pages.mjs)'
      ])
    } finally {
      rmSync(page)
    }
  })

  it('are refused when their anchor is a heading’s on the site or on GitHub but not on both', async () => {
    // VitePress makes "Safari's 7-day cookie cap" safari-s-7-day-cookie-cap; GitHub drops the
    // apostrophe, safaris-7-day-cookie-cap: a link with either works in one place only.
    const page = new URL('../../docs/reference/anchors-under-test.md', import.meta.url).pathname
    writeFileSync(
      page,
      "# Anchors\n\n## The shopper's cart\n\n## Recipes\n\n## Recipes\n\n" +
        '[a](privacy.md#safari-s-7-day-cookie-cap) [b](privacy.md#safaris-7-day-cookie-cap) [c](#the-shopper-s-cart) ' +
        '[fine](#anchors) [also fine](#recipes-1) [and this](../guide/relay.md#the-address-of-the-shopper)\n'
    )
    const differs = (href: string, heading: string, site: string, github: string) =>
      `docs/reference/anchors-under-test.md: ${href}: the heading "${heading}" is #${site} on the site but #${github} on GitHub: ` +
      'word it so that both agree (an apostrophe or a dot is what differs most often)'
    try {
      expect(await checkLinks([page])).toEqual([
        differs('privacy.md#safari-s-7-day-cookie-cap', "Safari's 7-day cookie cap", 'safari-s-7-day-cookie-cap', 'safaris-7-day-cookie-cap'),
        differs('privacy.md#safaris-7-day-cookie-cap', "Safari's 7-day cookie cap", 'safari-s-7-day-cookie-cap', 'safaris-7-day-cookie-cap'),
        differs('#the-shopper-s-cart', "The shopper's cart", 'the-shopper-s-cart', 'the-shoppers-cart')
      ])
    } finally {
      rmSync(page)
    }
  })
})
