// @vitest-environment node
import { execFileSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'

/*
 * The built declarations (npm test builds first), seen as a user's project sees them: the
 * package installed by its name, compiled by two TypeScript versions under every module mode a
 * project may use, with the strictest options users turn on.
 */
const root = process.cwd()
const COMPILERS = {
  '6.0': join(root, 'node_modules/typescript/lib/tsc.js'),
  '5.9': join(root, 'test/types/node_modules/typescript/lib/tsc.js')
}
type Version = keyof typeof COMPILERS
const STRICT = {
  strict: true,
  exactOptionalPropertyTypes: true,
  noUncheckedIndexedAccess: true,
  noEmit: true,
  target: 'es2022',
  lib: ['es2022', 'dom'],
  types: []
}
const MODES = {
  'nodenext, ESM': { file: 'consumer.mts', module: 'nodenext', moduleResolution: 'nodenext' },
  'nodenext, CommonJS': { file: 'consumer.cts', module: 'nodenext', moduleResolution: 'nodenext' },
  node10: { file: 'consumer.ts', module: 'commonjs', moduleResolution: 'node10' },
  bundler: { file: 'consumer.ts', module: 'esnext', moduleResolution: 'bundler' }
}

let project: string

/** The pages whose code samples users copy: README.md and the docs site's own pages (docs/api/ is generated from the types). */
function* markdownFiles(folder = 'docs'): Generator<string> {
  if (folder == 'docs') yield 'README.md'
  for (const entry of readdirSync(join(root, folder), { withFileTypes: true })) {
    const path = folder + '/' + entry.name
    if (entry.isDirectory() && !['api', '.vitepress', 'public'].includes(entry.name)) yield* markdownFiles(path)
    else if (entry.name.endsWith('.md')) yield path
  }
}

beforeAll(() => {
  // A project folder with the package under node_modules, as npm would install it, beside
  // the framework types the README recipes import.
  if (!existsSync(COMPILERS['5.9'])) throw new Error('test/types is not installed: npm ci --prefix test/types (npm test does it)')
  project = mkdtempSync(join(tmpdir(), 'types-'))
  const modules = join(project, 'node_modules')
  mkdirSync(modules)
  symlinkSync(root, join(modules, 'discovery-feedback'), 'dir')
  for (const name of readdirSync(join(root, 'test/types/node_modules'))) {
    if (name != 'typescript' && !name.startsWith('.')) symlinkSync(join(root, 'test/types/node_modules', name), join(modules, name), 'dir')
  }
  for (const file of ['consumer.mts', 'consumer.cts', 'consumer.ts']) copyFileSync(join(root, 'test/types/consumer.ts'), join(project, file))
  copyFileSync(join(root, 'test/types/sample-globals.d.ts'), join(project, 'sample-globals.d.ts'))
})

/** Compiles with one TypeScript version; resolves its diagnostics, '' when there are none. */
function compile(version: Version, name: string, compilerOptions: Record<string, unknown>, files: string[]): string {
  // TypeScript 6 deprecates node10 resolution; projects that still use it say so.
  const deprecations = version == '6.0' && compilerOptions.moduleResolution == 'node10' ? { ignoreDeprecations: '6.0' } : {}
  const config = join(project, `tsconfig.${name}.${version}.json`)
  writeFileSync(config, JSON.stringify({ compilerOptions: { ...compilerOptions, ...deprecations }, files }))
  try {
    execFileSync(process.execPath, [COMPILERS[version], '-p', config, '--pretty', 'false'], { cwd: project, encoding: 'utf8' })
    return ''
  } catch (error: any) {
    return String(error.stdout || error.message)
  }
}

describe.each(Object.keys(COMPILERS) as Version[])('types with TypeScript %s', (version) => {
  it('is the version it says', () => {
    const out = execFileSync(process.execPath, [COMPILERS[version], '-v'], { encoding: 'utf8' })
    expect(out).toContain('Version ' + version + '.')
  })

  it.each(Object.entries(MODES))('resolve all three entries under %s, strict, and keep wrong calls errors', (mode, { file, ...options }) => {
    // skipLibCheck off: errors inside our declaration files count.
    expect(compile(version, mode.replace(/\W+/g, '-'), { ...STRICT, ...options, skipLibCheck: false }, [file])).toBe('')
  })

  it('compile every js and jsx sample of the README and the docs, strict, with noUncheckedIndexedAccess', () => {
    const samples = [...markdownFiles()].flatMap((page) =>
      [...readFileSync(join(root, page), 'utf8').matchAll(/^```(jsx?)\n([\s\S]*?)^```$/gm)].map(([, language, code], index) => ({
        page,
        language,
        code,
        index
      }))
    )
    expect(samples.length).toBeGreaterThanOrEqual(13)
    // Each sample is a module of its own, so two samples may both declare a tracker. One whose
    // first line names its file (`// lib/tracker.js`) is written there, for the others to import.
    const files = samples.map(({ page, language, code, index }) => {
      const file = code.match(/^\/\/ ([\w/.-]+\.jsx?)\n/)?.[1] ?? `samples/${page.replace(/\.md$/, '').replace(/\W+/g, '-')}-${index + 1}.${language}`
      mkdirSync(dirname(join(project, file)), { recursive: true })
      writeFileSync(join(project, file), code + '\nexport {}\n')
      return file
    })
    const options = { ...STRICT, allowJs: true, checkJs: true, jsx: 'react-jsx', module: 'esnext', moduleResolution: 'bundler', skipLibCheck: true }
    expect(compile(version, 'readme', options, ['sample-globals.d.ts', ...files])).toBe('')
  })
})

describe('the packed package', () => {
  // Both pack the package as npm publishes it and exit non-zero on a problem.
  const run = (bin: string, args: string[]) => {
    try {
      execFileSync(process.execPath, [join(root, bin), ...args], { cwd: root, encoding: 'utf8', stdio: 'pipe' })
      return ''
    } catch (error: any) {
      return String(error.stdout) + String(error.stderr)
    }
  }

  it('resolves its types for node10, node16 from CommonJS and from ESM, and bundlers (are-the-types-wrong)', () => {
    expect(run('node_modules/@arethetypeswrong/cli/dist/index.js', ['--pack', '.', '--profile', 'strict', '--format', 'ascii'])).toBe('')
  })

  it('has no publint error, warning or suggestion', () => {
    expect(run('node_modules/publint/src/cli.js', ['--strict', '--level', 'suggestion'])).toBe('')
  })
})
