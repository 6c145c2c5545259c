// Builds the docs site (npm run docs), offline, from the repository: first what VitePress needs
// beside the hand-written pages (the API reference pages from the built declarations' TSDoc,
// the benchmark page from bench/results.json, the machine-readable contract served beside
// them), then the site, which fails on a dead link and here also on a page that fails to render,
// and before it on a link that does not work in the repository too (doc-links.mjs).
import { execFileSync, spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { ENTRIES, extractAll } from './api-extractor.mjs'
import { checkLinks } from './doc-links.mjs'
import { loadTraceTable } from '../bench/load-trace-table.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const at = (path) => root + path
// API Documenter takes package names only; a subpath entry goes in as a scope and is named back.
const SCOPE = '@discovery-feedback/'

/** Builds dist/ when a fresh clone has none: the API reference is read from its declarations. */
function ensureBuild() {
  if (!existsSync(at('dist/index.d.ts'))) execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' })
}

/** Writes each entry's doc model unless it is newer than the declarations it was made from. */
function ensureDocModels() {
  const fresh = Object.keys(ENTRIES).every((entry) => {
    const model = at(`temp/api/${entry}.api.json`)
    return existsSync(model) && statSync(model).mtimeMs >= statSync(at(`dist/${entry}.d.ts`)).mtimeMs
  })
  if (!fresh && !extractAll({ local: true, report: false })) throw new Error('API Extractor failed on dist/*.d.ts')
}

/** The doc models with each subpath entry named as a package of its own, for API Documenter. */
function renamedModels(folder) {
  rmSync(folder, { recursive: true, force: true })
  mkdirSync(folder, { recursive: true })
  for (const entry of Object.keys(ENTRIES)) {
    const name = entry == 'index' ? 'discovery-feedback' : SCOPE + entry
    const text = readFileSync(at(`temp/api/${entry}.api.json`), 'utf8').replaceAll('"discovery-feedback!', JSON.stringify(name + '!').slice(0, -1))
    const model = JSON.parse(text)
    model.name = name
    writeFileSync(`${folder}/${entry}.api.json`, JSON.stringify(model))
  }
}

/** docs/api/: one page per entry, function, type and member, as API Documenter writes them, with the entries' real names. */
function writeApiPages() {
  renamedModels(at('temp/api-input'))
  const out = at('docs/api')
  rmSync(out, { recursive: true, force: true })
  const documenter = at('node_modules/@microsoft/api-documenter/bin/api-documenter')
  execFileSync(process.execPath, [documenter, 'markdown', '-i', at('temp/api-input'), '-o', out], { stdio: 'pipe' })
  for (const file of readdirSync(out)) {
    const path = `${out}/${file}`
    writeFileSync(path, safeForVue(readFileSync(path, 'utf8').replaceAll(SCOPE, 'discovery-feedback/')))
  }
}

/**
 * The rows of the API pages' tables whose Description cell is empty ("client.md: createClient"),
 * as API Documenter leaves one for an item, a parameter or an entry without TSDoc.
 */
function emptyDescriptions() {
  const empty = []
  for (const file of readdirSync(at('docs/api'))) {
    for (const [table] of readFileSync(at('docs/api/' + file), 'utf8').matchAll(/<table>[\s\S]*?<\/table>/g)) {
      const column = [...table.matchAll(/<th>([\s\S]*?)<\/th>/g)].findIndex(([, header]) => header.trim() == 'Description')
      if (column < 0) continue
      for (const [row] of table.matchAll(/<tr><td>[\s\S]*?<\/tr>/g)) {
        const cells = [...row.matchAll(/<td>([\s\S]*?)<\/td>/g)].map(([, cell]) => cell.trim())
        // API Documenter writes `_(Optional)_` before an optional parameter's own words: alone, the cell says nothing.
        if (!cells[column].replace('_(Optional)_', '').trim()) empty.push(file + ': ' + cells[0].replace(/\s+/g, ' '))
      }
    }
  }
  return empty
}

// The HTML API Documenter writes itself; any other tag-like text came from a TSDoc comment.
const TAGS = /^\/?(table|thead|tbody|tr|th|td|b|i|br|p|a|code)\b/

/**
 * A page as Vue compiles it, VitePress's pages being Vue templates: outside code, text such as
 * `<secret>` from a comment would open an element that never closes. Such text is escaped.
 */
function safeForVue(page) {
  let fenced = false
  return page
    .split('\n')
    .map((line) => {
      if (line.startsWith('```')) fenced = !fenced
      if (fenced) return line
      // Outside code spans only: within them the text is shown as written.
      return line
        .split('`')
        .map((part, index) =>
          index % 2 ? part : part.replace(/<(?=[/!]?[A-Za-z])/g, (bracket, offset) => (TAGS.test(part.slice(offset + 1)) ? bracket : '&lt;'))
        )
        .join('`')
    })
    .join('\n')
}

/** docs/reference/benchmarks.md: the last run's table with its date, and how each figure is measured. */
function writeBenchmarks() {
  const results = JSON.parse(readFileSync(at('bench/results.json'), 'utf8'))
  const cell = (text) => String(text).replaceAll('|', '\\|')
  const rows = results.rows.map(({ measure, value, comparison }) => `| ${cell(measure)} | ${cell(value)} | ${cell(comparison)} |`)
  const parts = (results.raw?.breakdown ?? []).map(({ source, brotli }) => `| ${cell(source)} | ${brotli} B |`)
  const traced = results.raw?.loadTraced
  const page = [
    '# Benchmarks',
    '',
    `Run of ${results.date} (\`${results.command}\`, Node ${results.node.replace(/^v/, '')}). This page is made from`,
    '`bench/results.json` when the site is built; `npm run bench` measures again and rewrites it. Runs on',
    'a shared machine vary from day to day: compare the ratios, not the times.',
    '',
    '| measure | discovery-feedback | compared |',
    '|---|---|---|',
    ...rows,
    ...(parts.length
      ? [
          '',
          '## Where the script tag’s bytes go',
          '',
          'From the build’s source map, in that run.',
          '',
          '| source | brotli (estimated) |',
          '|---|---|',
          ...parts
        ]
      : []),
    ...(traced
      ? [
          '',
          '## Where a page load’s main-thread time goes',
          '',
          `From Chromium’s trace of ${traced.loads} interleaved loads of each page (\`bench/load-trace.mjs\`), in ms, medians, less the page`,
          'without a library; what each kind counts is under “What a page load costs, and why” below.',
          '',
          ...loadTraceTable(traced)
        ]
      : []),
    '',
    readFileSync(at('bench/README.md'), 'utf8')
      .replace(/^# .*\n/, '')
      .trim(),
    ''
  ]
  writeFileSync(at('docs/reference/benchmarks.md'), page.join('\n'))
}

/**
 * Runs VitePress's build. It fails on a dead link by itself; a page whose template throws while
 * it is rendered (text such as `{{ a.b }}` outside code, which Vue evaluates) is only logged and
 * shipped empty, so its error fails the build here.
 */
function buildSite() {
  const vitepress = at('node_modules/vitepress/bin/vitepress.js')
  const run = spawnSync(process.execPath, [vitepress, 'build', at('docs')], { cwd: root, encoding: 'utf8' })
  process.stdout.write(run.stdout)
  process.stderr.write(run.stderr)
  if (run.status != 0) process.exit(run.status ?? 1)
  if (/^\w*Error\b/m.test(run.stdout + run.stderr)) {
    console.error('docs: a page failed to render (see the error above)')
    process.exit(1)
  }
}

ensureBuild()
ensureDocModels()
writeApiPages()
writeBenchmarks()
// The contract, served by the site at /schema/envelope.json and /schema/openapi.json.
cpSync(at('schema'), at('docs/public/schema'), { recursive: true })
const faults = [...emptyDescriptions().map((row) => 'an empty description in the API reference, ' + row), ...(await checkLinks())]
if (faults.length) {
  for (const fault of faults) console.error('docs: ' + fault)
  process.exit(1)
}
buildSite()
