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
 * Returns what is wrong with every link of the docs pages, one line each ("docs/guide/x.md:
 * /reference/delivery: …"); none when every link resolves. A link must be relative (a
 * site-absolute `/reference/delivery` leads nowhere in the repository), lead to a file of the
 * repository, to one the site has too (a page under docs/, a file site-pages.mjs maps to a page,
 * or one of the folders the site serves), and, with an anchor, to a heading of that page as the
 * site names it. `files`: the pages to check, by absolute path; by default every hand-written one.
 */
export async function checkLinks(files = pages()) {
  // The site's own renderer, for the links as it reads them and the ids it gives headings.
  const md = await createMarkdownRenderer(docs, { attrs: { disable: true } })
  const anchorsOf = new Map()
  const anchors = (file) => {
    if (!anchorsOf.has(file)) {
      const html = md.render(readFileSync(file, 'utf8'), { path: file, relativePath: relative(docs, file), cleanUrls: true })
      anchorsOf.set(file, new Set([...html.matchAll(/<h\d id="([^"]+)"/g)].map((match) => match[1])))
    }
    return anchorsOf.get(file)
  }
  const faults = []
  for (const page of files) {
    const say = (href, why) => faults.push(`${relative(root, page)}: ${href}: ${why}`)
    const tokens = md.parse(readFileSync(page, 'utf8'), { path: page, relativePath: relative(docs, page), cleanUrls: true })
    const links = tokens.flatMap((token) => token.children || []).filter((token) => token.type == 'link_open')
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
      else if (anchor && file.endsWith('.md') && !anchors(file).has(anchor)) say(href, 'no heading with this anchor on that page')
    }
  }
  return faults
}

if (process.argv[1] == fileURLToPath(import.meta.url)) {
  const faults = await checkLinks()
  for (const fault of faults) console.error(fault)
  process.exitCode = faults.length ? 1 : 0
}
