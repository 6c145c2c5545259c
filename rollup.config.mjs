import { rmSync } from 'node:fs'
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
// builds leave nanoid and js-cookie to the shop's bundler; the script tags carry them, in
// their browser builds.
const moduleBuild = (name, external = ['nanoid', 'js-cookie'], first = false) => ({
  input: `src/${name}.ts`,
  external,
  plugins: [...(first ? [cleanDist] : []), compile()],
  output: [
    { file: `dist/${name}.mjs`, format: 'es' },
    { file: `dist/${name}.cjs`, format: 'cjs' }
  ]
})

// Each entry's declarations in one file, with no relative imports left for a resolver to get
// wrong (nodenext wants extensions in them), twice: .d.ts is read as ESM beside the .mjs
// ("type": "module"), .d.cts as CommonJS beside the .cjs.
const declarations = (name) => ({
  input: `src/${name}.ts`,
  external: ['nanoid', 'js-cookie', '@shopify/web-pixels-extension'],
  plugins: [dts()],
  output: [
    { file: `dist/${name}.d.ts`, format: 'es' },
    { file: `dist/${name}.d.cts`, format: 'es' }
  ]
})

// The script tags: one file each, with nanoid and js-cookie in their browser builds. The
// minifier shortens local names only; property names stay as the source writes them.
const scriptTag = (input, file, name) => ({
  input,
  plugins: [nodeResolve({ browser: true }), compile(), terser({ compress: { passes: 2 }, format: { comments: false } })],
  output: { file, format: 'iife', name }
})

export default [
  moduleBuild('index', undefined, true),
  moduleBuild('client', []),
  moduleBuild('server'),
  // The Shopify entry takes only types from Shopify's package.
  moduleBuild('shopify', ['nanoid', '@shopify/web-pixels-extension']),
  moduleBuild('relay', ['nanoid', 'qs']),
  declarations('index'),
  declarations('client'),
  declarations('server'),
  declarations('shopify'),
  declarations('relay'),
  scriptTag('src/script-tags/discovery-client.ts', 'dist/discovery-feedback-client.min.js'),
  scriptTag('src/script-tags/declarative.ts', 'dist/discovery-feedback-declarative.min.js'),
  scriptTag('src/script-tags/data-layer.ts', 'dist/discovery-feedback-datalayer.min.js'),
  scriptTag('src/script-tags/tracker.ts', 'dist/discovery-feedback.min.js'),
  // Not a script tag: the bundle a Shopify custom pixel pastes (bin/custom-pixel.mjs).
  scriptTag('src/script-tags/shopify.ts', 'dist/discovery-feedback-shopify.min.js', 'discoveryFeedbackShopify')
]
