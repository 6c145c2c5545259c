import { readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { brotliCompressSync, gzipSync, constants } from 'node:zlib'
import { rollup } from 'rollup'
import { nodeResolve } from '@rollup/plugin-node-resolve'
import commonjs from '@rollup/plugin-commonjs'
import replace from '@rollup/plugin-replace'
import terser from '@rollup/plugin-terser'
import { decode } from '@jridgewell/sourcemap-codec'

export const LIBRARIES = ['discovery-feedback', 'search-insights', 'plausible-tracker', 'snowplow', 'findify']
const here = new URL('.', import.meta.url)

// @findify/analytics relies on what its own webpack build provides: a CommonJS module (store.js)
// imported as a namespace and called, and Node's `global`. Read as a default import and as
// globalThis, the same code bundles with rollup.
const findifyInterop = {
  name: 'findify-interop',
  transform: (code, id) =>
    id.includes('@findify/analytics')
      ? code.replace(/import \* as (\w+) from '(store[^']*)'/g, "import $1 from '$2'").replace(/\bglobal\./g, 'globalThis.')
      : null
}

/** Bytes of a file as served: minified, gzip at level 9, brotli at its best. */
export function measure(code) {
  const bytes = Buffer.from(code)
  return {
    min: bytes.length,
    gzip: gzipSync(bytes, { level: 9 }).length,
    brotli: brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length
  }
}

/**
 * Bundles every entry (init + one click) with the same bundler and settings, as a shop's build
 * would: browser builds of dependencies, production mode, terser, one IIFE.
 */
export async function bundleAll() {
  mkdirSync(new URL('out/', here), { recursive: true })
  const result = {}
  for (const name of LIBRARIES) {
    const bundle = await rollup({
      input: new URL('entries/' + name + '.js', here).pathname,
      plugins: [
        findifyInterop,
        replace({ preventAssignment: true, values: { 'process.env.NODE_ENV': '"production"' } }),
        nodeResolve({ browser: true }),
        commonjs(),
        terser()
      ],
      onwarn: () => {}
    })
    const { output } = await bundle.generate({ format: 'iife' })
    await bundle.close()
    const file = new URL('out/' + name + '.js', here)
    writeFileSync(file, output[0].code)
    result[name] = { file: file.pathname, ...measure(output[0].code) }
  }
  return result
}

/** The script-tag files as their projects ship them. */
export const shipped = () => ({
  'discovery-feedback': measure(readFileSync(new URL('../dist/discovery-feedback.min.js', here))),
  'search-insights': measure(readFileSync(new URL('node_modules/search-insights/dist/search-insights.min.js', here)))
})

/**
 * Where the script tag's bytes come from: the project's own build of it, with a source map,
 * each minified character charged to the source file it came from; brotli bytes shared out in
 * the same proportion (an estimate: some code compresses better than other).
 */
export async function breakdown() {
  const configs = (await import(new URL('../rollup.config.mjs', here))).default
  const config = configs.find((entry) => entry.input == 'src/script-tags/tracker.ts')
  const bundle = await rollup({ ...config, onwarn: () => {} })
  const { output } = await bundle.generate({ ...config.output, file: undefined, sourcemap: true })
  await bundle.close()
  const { code, map } = output[0]
  const lines = code.split('\n')
  const chars = {}
  for (const [line, segments] of decode(map.mappings).entries()) {
    const length = lines[line].length
    segments.forEach((segment, i) => {
      const end = i + 1 < segments.length ? segments[i + 1][0] : length
      const source = segment.length > 1 ? map.sources[segment[1]].replace(/^(\.\.\/)+/, '').replace(/^node_modules\/([^/]+)\/.*/, '$1') : '(wrapper)'
      chars[source] = (chars[source] || 0) + end - segment[0]
    })
  }
  const total = measure(code).brotli
  return Object.entries(chars)
    .sort((a, b) => b[1] - a[1])
    .map(([source, count]) => ({ source, min: count, brotli: Math.round((total * count) / code.length) }))
}
