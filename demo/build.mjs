// `npm run demo` starts from the library's builds in dist/: this module makes them first when
// they are missing or older than the source, and says what it does while a person waits.
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { rollup } from 'rollup'

/** The newest modification time (ms) of `paths`, folders walked. */
function newest(paths) {
  let latest = 0
  for (const path of paths) {
    const stat = statSync(path)
    latest = Math.max(latest, stat.isDirectory() ? newest(readdirSync(path).map((name) => join(path, name))) : stat.mtimeMs)
  }
  return latest
}

/**
 * Builds dist/ by the project's rollup.config.mjs, one bundle after another, printing each as it
 * is written ("[3/17] dist/server.mjs, dist/server.cjs (4.2 s)"), unless every bundle is there
 * and newer than the source. Paths are the repository's: run it from the repository's root.
 */
export async function buildIfStale(log = console.log) {
  const { default: configs } = await import('../rollup.config.mjs')
  const files = (config) => [config.output].flat().map((output) => output.file)
  const outputs = configs.flatMap(files)
  const built = Math.min(...outputs.map((file) => (existsSync(file) ? statSync(file).mtimeMs : 0)))
  if (built > newest(['src', 'rollup.config.mjs', 'tsconfig.json'])) return log('Using the library as built in dist/.')
  log(`Building the library into dist/ first: ${configs.length} bundles, a minute or two on two cores.`)
  for (const [index, config] of configs.entries()) {
    const started = Date.now()
    const bundle = await rollup(config)
    for (const output of [config.output].flat()) await bundle.write(output)
    await bundle.close()
    log(`  [${index + 1}/${configs.length}] ${files(config).join(', ')} (${((Date.now() - started) / 1000).toFixed(1)} s)`)
  }
}
