import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import nodeResolve, { DEFAULTS } from '@rollup/plugin-node-resolve'
import { rollup, type Plugin, type RollupLog } from 'rollup'
import ts from 'typescript'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

// The compiler options of the library's own build, read once from tsconfig.json.
const compilerOptions = (() => {
  const { config, error } = ts.readConfigFile(join(ROOT, 'tsconfig.json'), ts.sys.readFile)
  if (error) throw new Error('reading tsconfig.json: ' + ts.flattenDiagnosticMessageText(error.messageText, '\n'))
  const { options, errors } = ts.convertCompilerOptionsFromJson(config.compilerOptions, ROOT)
  if (errors.length) throw new Error('tsconfig.json: ' + errors.map((e) => ts.flattenDiagnosticMessageText(e.messageText, '\n')).join('; '))
  return { ...options, declaration: false, sourceMap: false }
})()

/**
 * Compiles each TypeScript file on its own, as a shop's bundler does. The tsconfig sets
 * isolatedModules, so no file needs another's types to compile. Type errors are left to tsc,
 * which checks src/ as a whole.
 */
const typescript: Plugin = {
  name: 'typescript',
  transform(code, id) {
    if (!id.endsWith('.ts') || id.endsWith('.d.ts') || id.includes('/node_modules/')) return null
    return { code: ts.transpileModule(code, { fileName: id, compilerOptions }).outputText, map: null }
  }
}

export interface BundleOptions {
  /**
   * The module that the entry is written as if it were, usually the caller's `import.meta.url`:
   * the entry's relative imports resolve from its directory. By default they resolve from the
   * repository's root.
   */
  from?: string
  /** The global that receives the entry's exports. It is needed when the entry exports anything. */
  name?: string
  /** Tells which of rollup's warnings are expected. Any other warning fails the bundle. */
  ignore?: (warning: RollupLog) => boolean
}

/**
 * Bundles `code`, the text of an ES module, into one classic script (an IIFE), as a shop's
 * bundler or Shopify's CLI would build it for the browser. Relative imports resolve from
 * `options.from`, bare imports from node_modules/ with their browser builds first, and
 * TypeScript files are compiled on the way. For example, in a file of test/integrations/consent/,
 * `bundleIife("export { tcfConsent } from '../../../src/integrations/consent/tcf.ts'", { from: import.meta.url, name: 'adapters' })`.
 */
export async function bundleIife(code: string, options: BundleOptions = {}): Promise<string> {
  // The entry has no file of its own. It gets a path beside `from`, which its relative imports
  // resolve from, and its bare imports resolve from node_modules/ as any file's would.
  const entry = join(options.from ? dirname(options.from.startsWith('file:') ? fileURLToPath(options.from) : options.from) : ROOT, 'iife-entry.js')
  const bundle = await rollup({
    input: entry,
    plugins: [
      { name: 'entry', resolveId: (id) => (id == entry ? id : null), load: (id) => (id == entry ? code : null) },
      // An extensionless import finds a .ts file only where no JavaScript file matches, so the
      // files of packages resolve as Node would find them.
      nodeResolve({ browser: true, extensions: [...DEFAULTS.extensions, '.ts'] }),
      typescript
    ],
    onwarn: (warning) => {
      if (options.ignore?.(warning)) return
      throw new Error('bundling ' + (options.name ?? 'the entry') + ': ' + warning.message)
    }
  })
  try {
    const { output } = await bundle.generate({ format: 'iife', name: options.name })
    return output[0].code
  } finally {
    await bundle.close()
  }
}

/**
 * Tells a warning about an import cycle among the files of one package in node_modules/, such as
 * `'@iabtechlabtcf/'`. Such a cycle is the package's own; one that touches our files is not.
 */
export const cycleWithin =
  (packagePath: string) =>
  (warning: RollupLog): boolean =>
    warning.code == 'CIRCULAR_DEPENDENCY' && !!warning.ids?.every((id) => id.includes('/node_modules/' + packagePath))
