import { readFileSync, rmSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import nodeResolve from '@rollup/plugin-node-resolve'
import terser from '@rollup/plugin-terser'
import typescript from '@rollup/plugin-typescript'
import { dts } from 'rollup-plugin-dts'

// Built anew each time: a file left from an older layout would be packed with the rest. A
// hook of the first build rather than a statement here, so that importing this config (the
// bench reads it to measure the script tag) deletes nothing.
const cleanDist = { name: 'clean-dist', buildStart: () => rmSync('dist', { recursive: true, force: true }) }

// The build compiles src/ as one program, so that each use of a const enum (the kinds of
// shared/rules.ts) is written as its value and the enum itself is left out. tsconfig.json keeps
// isolatedModules for the checks: each file still compiles on its own, as a shop's bundler does.
const compile = () => typescript({ declaration: false, outDir: 'dist', isolatedModules: false })

// One source, a module build per entry and a script tag per page-facing file. The module
// builds leave their dependencies (nanoid, for the server's entries) to the shop's bundler or
// Node; the script tags carry everything they use.
const moduleBuild = (name, external = ['nanoid', 'js-cookie'], first = false) => ({
  input: `src/${name}.ts`,
  external,
  plugins: [...(first ? [cleanDist] : []), compile()],
  output: [
    { file: `dist/${name}.mjs`, format: 'es' },
    { file: `dist/${name}.cjs`, format: 'cjs' }
  ]
})

// The inspector's page goes into the collector's entry as a string (`./inspector.html?raw`, the
// way the tests' runner reads it too): nothing beside the entry to ship or to find at run time,
// and the same for its ES module and CommonJS builds.
const rawText = {
  name: 'raw-text',
  resolveId: (source, importer) => (source.endsWith('?raw') && importer ? resolve(dirname(importer), source) : null),
  load: (id) => (id.endsWith('?raw') ? `export default ${JSON.stringify(readFileSync(id.slice(0, -'?raw'.length), 'utf8'))}` : null)
}

// The collector runs the relay's built entry rather than a copy of it: the relay a shop deploys
// and the reference collector are one code path, shipped once.
const RELAY = 'discovery-feedback/relay'
const builtRelay = {
  name: 'built-relay',
  resolveId: (source, importer) => (source == '../relay' && importer?.includes('/src/collector/') ? { id: RELAY, external: true } : null)
}
const collectorBuild = {
  input: 'src/collector.ts',
  external: ['nanoid', 'qs', /^node:/],
  plugins: [rawText, builtRelay, typescript({ declaration: false, outDir: 'dist' })],
  output: [
    { file: 'dist/collector.mjs', format: 'es', paths: { [RELAY]: './relay.mjs' } },
    { file: 'dist/collector.cjs', format: 'cjs', paths: { [RELAY]: './relay.cjs' } }
  ]
}

// Each entry's declarations in one file, with no relative imports left for a resolver to get
// wrong (nodenext wants extensions in them), twice: .d.ts is read as ESM beside the .mjs
// ("type": "module"), .d.cts as CommonJS beside the .cjs.
// The entry's own comment, its TSDoc @packageDocumentation, goes first in each file: API
// Extractor reads it there as the entry's description, and the bundling of the declarations
// leaves it out otherwise.
const declarations = (name) => {
  const banner = /^\/\*\*[\s\S]*?@packageDocumentation[\s\S]*?\*\//.exec(readFileSync(`src/${name}.ts`, 'utf8'))?.[0]
  return {
    input: `src/${name}.ts`,
    external: ['nanoid', 'js-cookie', '@shopify/web-pixels-extension', /^node:/],
    plugins: [dts()],
    output: [
      { file: `dist/${name}.d.ts`, format: 'es', banner },
      { file: `dist/${name}.d.cts`, format: 'es', banner }
    ]
  }
}

// The script tags: one file each, with what they import in its browser build. The
// minifier shortens local names only; property names stay as the source writes them. A third
// pass of its safe transforms still finds code that the second one made inlinable.
const scriptTag = (input, file, { name, preamble } = {}) => ({
  input,
  plugins: [nodeResolve({ browser: true }), compile(), terser({ compress: { passes: 3 }, format: { comments: false, preamble } })],
  output: { file, format: 'iife', name }
})

// Chromium's explicit compile hint (V8, "Giving V8 a heads-up", Chrome 136): a file whose first
// line is this comment has all its functions compiled at once, while it streams in and off the
// main thread, rather than each on the main thread the first time it is called. Nearly every
// function of the tracker's tag runs while the page loads (options, identity, outbox, the
// view-page and its request), so the page pays less main-thread time for it (bench/load.mjs).
// Other browsers read it as a comment.
const ALL_FUNCTIONS_CALLED_ON_LOAD = '//# allFunctionsCalledOnLoad'

export default [
  moduleBuild('index', undefined, true),
  moduleBuild('client', []),
  moduleBuild('server', ['nanoid', 'lossless-json']),
  // The Shopify entry takes only types from Shopify's package.
  moduleBuild('shopify', ['nanoid', '@shopify/web-pixels-extension']),
  // The relay's metrics (prom-client) and bot list (isbot) are its own dependencies, for Node.
  moduleBuild('relay', ['nanoid', 'qs', 'isbot', 'prom-client']),
  collectorBuild,
  declarations('index'),
  declarations('client'),
  declarations('server'),
  declarations('shopify'),
  declarations('relay'),
  declarations('collector'),
  scriptTag('src/script-tags/discovery-client.ts', 'dist/discovery-feedback-client.min.js'),
  scriptTag('src/script-tags/declarative.ts', 'dist/discovery-feedback-declarative.min.js'),
  scriptTag('src/script-tags/data-layer.ts', 'dist/discovery-feedback-datalayer.min.js'),
  scriptTag('src/script-tags/shopify-cart.ts', 'dist/discovery-feedback-shopify-cart.min.js'),
  scriptTag('src/script-tags/tracker.ts', 'dist/discovery-feedback.min.js', { preamble: ALL_FUNCTIONS_CALLED_ON_LOAD }),
  // Not a script tag: the bundle a Shopify custom pixel pastes (src/collector/custom-pixel.ts).
  scriptTag('src/script-tags/shopify.ts', 'dist/discovery-feedback-shopify.min.js', { name: 'discoveryFeedbackShopify' })
]
