// Checks the links of the hand-written docs pages (docs/**/*.md but the generated API and
// benchmark pages) so that each works in both places a page is read: as Markdown in the
// repository and on the docs site. The docs build (scripts/docs.mjs) fails on what this finds.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createMarkdownRenderer } from 'vitepress'
import { SERVED_FOLDERS, SITE_PAGES } from '../docs/.vitepress/site-pages.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const docs = join(root, 'docs')
// Written by the docs build from other sources; their links are checked where they come from.
const GENERATED = ['docs/api', 'docs/reference/benchmarks.md', 'docs/.vitepress', 'docs/public']

/** The hand-written pages under `folder`, by absolute path. */
function pages(folder = docs) {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name)
    if (GENERATED.includes(relative(root, path))) return []
    if (statSync(path).isDirectory()) return pages(path)
    return path.endsWith('.md') ? [path] : []
  })
}

/**
 * A heading's anchor as GitHub names it when it shows the page: its text lowercased, without
 * any character but letters, marks, digits, underscores, hyphens and spaces, each space a
 * hyphen (GitHub's TableOfContentsFilter, `/[^\p{Word}\- ]/u`); where two headings of a page
 * come out the same, the second gets `-1`, the third `-2`. The site's own differs: VitePress
 * turns each run of punctuation and spaces into one hyphen, so "The shopper's address" is
 * `the-shopper-s-address` there and `the-shoppers-address` on GitHub. Such a heading is worded
 * otherwise rather than given an id of its own (`{#id}`): the site's Markdown has attributes
 * turned off (config.mts), and GitHub would show the `{#id}` as text.
 */
function githubAnchors(texts) {
  const seen = new Map()
  return texts.map((text) => {
    const anchor = text
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{Nd}\p{Pc}\- ]/gu, '')
      .replaceAll(' ', '-')
    const count = seen.get(anchor) ?? 0
    seen.set(anchor, count + 1)
    return count ? `${anchor}-${count}` : anchor
  })
}

/** The headings of a page: each one's text, and its anchor on the site (VitePress's id) and on GitHub. */
function headingsIn(md, file) {
  const tokens = md.parse(readFileSync(file, 'utf8'), { path: file, relativePath: relative(docs, file), cleanUrls: true })
  const found = tokens.flatMap((token, index) => {
    if (token.type != 'heading_open') return []
    // The heading's text as both render it, code spans included; the site's permalink adds no text but a space.
    const text = tokens[index + 1].children
      .filter((child) => child.type == 'text' || child.type == 'code_inline')
      .map((child) => child.content)
      .join('')
      .trim()
    return [{ text, site: token.attrGet('id') }]
  })
  const github = githubAnchors(found.map(({ text }) => text))
  return found.map((heading, index) => ({ ...heading, github: github[index] }))
}

/**
 * Returns what is wrong with every link of the docs pages, one line each ("docs/guide/x.md:
 * /reference/delivery: …"); none when every link resolves. A link must be relative (a
 * site-absolute `/reference/delivery` leads nowhere in the repository), lead to a file of the
 * repository, to one the site has too (a page under docs/, a file site-pages.mjs maps to a page,
 * or one of the folders the site serves), and, with an anchor, to a heading of that page as both
 * the site and GitHub name it. `files`: the pages to check, by absolute path; by default every
 * hand-written one.
 */
export async function checkLinks(files = pages()) {
  // The site's own renderer, for the links as it reads them and the ids it gives headings.
  const md = await createMarkdownRenderer(docs, { attrs: { disable: true } })
  const headingsOf = new Map()
  const headings = (file) => {
    if (!headingsOf.has(file)) headingsOf.set(file, headingsIn(md, file))
    return headingsOf.get(file)
  }
  const faults = []
  for (const page of files) {
    const say = (href, why) => faults.push(`${relative(root, page)}: ${href}: ${why}`)
    const tokens = md.parse(readFileSync(page, 'utf8'), { path: page, relativePath: relative(docs, page), cleanUrls: true })
    // Each heading's own permalink (VitePress's `header-anchor`) is the site's, not the page's.
    const links = tokens.flatMap((token) => token.children || []).filter((token) => token.type == 'link_open' && token.attrGet('class') != 'header-anchor')
    for (const href of links.map((token) => token.attrGet('href'))) {
      if (/^[a-z][a-z+.-]*:/i.test(href)) continue
      if (href.startsWith('/')) {
        say(href, 'site-absolute: it leads nowhere in the repository; write it relative to the page, such as ../reference/delivery.md')
        continue
      }
      const [path, anchor] = href.split('#')
      const file = path ? resolve(dirname(page), decodeURI(path)) : page
      const inRepository = relative(root, file).replaceAll('\\', '/')
      if (inRepository.startsWith('..') || !existsSync(file)) say(href, 'no such file in the repository')
      else if (!file.startsWith(docs + '/') && !SITE_PAGES[inRepository] && !SERVED_FOLDERS.some((folder) => inRepository.startsWith(folder)))
        say(href, 'outside docs/, and the site has no page for it (docs/.vitepress/site-pages.mjs)')
      else if (anchor && file.endsWith('.md')) {
        const heading = headings(file).find(({ site, github }) => site == anchor || github == anchor)
        if (!heading) say(href, 'no heading with this anchor on that page')
        else if (heading.site != heading.github)
          say(
            href,
            `the heading "${heading.text}" is #${heading.site} on the site but #${heading.github} on GitHub: ` +
              'word it so that both agree (an apostrophe or a dot is what differs most often)'
          )
      }
    }
  }
  return faults
}

if (process.argv[1] == fileURLToPath(import.meta.url)) {
  const faults = await checkLinks()
  for (const fault of faults) console.error(fault)
  process.exitCode = faults.length ? 1 : 0
}
