// @vitest-environment node
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

// CONTRIBUTING.md "How the code is laid out": each product imports shared/ and nothing of another
// product, except that the client and the Shopify pixel know the tracker by its public types, and
// the reference collector runs the relay through its public entry. The package's module entries
// stand right above the products, the script tags' entries in script-tags/.
const src = join(process.cwd(), 'src')
const PRODUCTS = ['browser', 'client', 'collector', 'integrations', 'relay', 'server', 'shopify', 'shared']

const sources = (folder: string): string[] =>
  readdirSync(folder, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(folder, entry.name)) : entry.name.endsWith('.ts') ? [join(folder, entry.name)] : []
  )

/** Every import of a file: where it leads (a folder of src, or a package) and whether it is types only. */
function importsOf(file: string) {
  const text = readFileSync(file, 'utf8')
  return [...text.matchAll(/^(?:import|export)( type)? [^;]*? from '([^']+)'/gms)].map(([, typeOnly, specifier]) => {
    const target = specifier.startsWith('.') ? relative(src, join(dirname(file), specifier)) : specifier
    return { typeOnly: !!typeOnly, specifier, target, folder: specifier.startsWith('.') ? target.split('/')[0] : 'package' }
  })
}

describe('the source tree', () => {
  it('has one folder per product, one for what they share and one for the script tags, with the module entries right above them', () => {
    expect(
      readdirSync(src, { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => entry.name)
        .sort()
    ).toEqual([...PRODUCTS, 'script-tags'].sort())
    expect(
      readdirSync(src)
        .filter((name) => name.endsWith('.ts'))
        .sort()
    ).toEqual(['client.ts', 'collector.ts', 'index.ts', 'relay.ts', 'server.ts', 'shopify.ts'])
    expect(readdirSync(join(src, 'script-tags')).sort()).toEqual([
      'data-layer.ts',
      'declarative.ts',
      'discovery-client.ts',
      'shopify-cart.ts',
      'shopify.ts',
      'tracker.ts'
    ])
  })

  it.each(PRODUCTS)(
    '%s/ imports only itself and shared/ (the client and the pixel: the tracker by its public types; the collector: the relay by its entry)',
    (product) => {
      const wrong: string[] = []
      for (const file of sources(join(src, product))) {
        for (const { typeOnly, specifier, target, folder } of importsOf(file)) {
          const allowed =
            folder == 'package' ||
            folder == product ||
            (folder == 'shared' && product != 'shared') ||
            // The client, the Shopify pixel and the integrations know the tracker by its public types.
            (['client', 'shopify', 'integrations'].includes(product) && typeOnly && target == 'browser/types') ||
            // The reference collector is the relay with a file sink: it runs the relay's public
            // entry (the build links it to dist/relay), never the relay's inner files.
            (product == 'collector' && target == 'relay')
          if (!allowed) wrong.push(`${relative(src, file)} imports ${specifier}`)
        }
      }
      expect(wrong).toEqual([])
    }
  )

  it("keeps Node's own modules in collector/, the one product that runs in Node alone", () => {
    const found = PRODUCTS.filter((product) => product != 'collector').flatMap((product) =>
      sources(join(src, product)).flatMap((file) =>
        importsOf(file)
          .filter(({ specifier }) => specifier.startsWith('node:'))
          .map(({ specifier }) => `${relative(src, file)} imports ${specifier}`)
      )
    )
    expect(found).toEqual([])
  })

  it("imports only the packages a user installs with it: its dependencies, and its peers' types", () => {
    const manifest = JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8'))
    const installed = Object.keys(manifest.dependencies)
    const peers = Object.keys(manifest.peerDependencies)
    const found = sources(src).flatMap((file) =>
      importsOf(file)
        .filter(({ folder, specifier, typeOnly }) => {
          if (folder != 'package' || specifier.startsWith('node:')) return false
          const name = specifier
            .split('/')
            .slice(0, specifier.startsWith('@') ? 2 : 1)
            .join('/')
          return !installed.includes(name) && !(typeOnly && peers.includes(name))
        })
        .map(({ specifier }) => `${relative(src, file)} imports ${specifier}`)
    )
    expect(found).toEqual([])
  })
})
