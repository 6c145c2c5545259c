import { rmSync } from 'node:fs'
import nodeResolve from '@rollup/plugin-node-resolve'
import terser from '@rollup/plugin-terser'
import typescript from '@rollup/plugin-typescript'
import { dts } from 'rollup-plugin-dts'

// Built anew each time: a file left from an older layout would be packed with the rest. A
// hook of the first build rather than a statement here, so that importing this config (the
// bench reads it to measure the script tag) deletes nothing.
const cleanDist = { name: 'clean-dist', buildStart: () => rmSync('dist', { recursive: true, force: true }) }

// One source, a module build per entry and a script tag per page-facing file. The module
// builds leave nanoid and js-cookie to the shop's bundler; the script tags carry them, in
// their browser builds.
const moduleBuild = (name, external = ['nanoid', 'js-cookie'], first = false) => ({
  input: `src/${name}.ts`,
  external,
  plugins: [...(first ? [cleanDist] : []), typescript({ declaration: false, outDir: 'dist' })],
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
  external: ['nanoid', 'js-cookie'],
  plugins: [dts()],
  output: [
    { file: `dist/${name}.d.ts`, format: 'es' },
    { file: `dist/${name}.d.cts`, format: 'es' }
  ]
})

// Fields and methods that the tracker's parts share inside the script tag and that no page or
// collector ever sees: the minifier may shorten them as it does local names. None may be a
// name the public API, the wire or a built-in the tag calls uses (stats' `queued`, the
// envelope's `key`, Response's `json`): it would be shortened there too.
const INTERNAL = /^(handed|sending|wire|adopt|suspend|resume|setPersist|tooLarge|wake)$/

const scriptTag = (input, file) => ({
  input,
  plugins: [
    nodeResolve({ browser: true }),
    typescript({ declaration: false, outDir: 'dist' }),
    terser({ compress: { passes: 2 }, mangle: { properties: { regex: INTERNAL } }, format: { comments: false } })
  ],
  output: { file, format: 'iife' }
})

export default [
  moduleBuild('index', undefined, true),
  moduleBuild('client', []),
  moduleBuild('server'),
  declarations('index'),
  declarations('client'),
  declarations('server'),
  scriptTag('src/client-script.ts', 'dist/discovery-feedback-client.min.js'),
  scriptTag('src/declarative-script.ts', 'dist/discovery-feedback-declarative.min.js'),
  scriptTag('src/script.ts', 'dist/discovery-feedback.min.js')
]
