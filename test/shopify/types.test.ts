// @vitest-environment node
import { execFileSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

// The event payloads the tests and the demo publish are checked against Shopify's own types
// (@shopify/web-pixels-extension), with the compiler's strict options. --checkJs takes in
// demo/shopify/checkout.mjs, whose JSDoc names those types, through events.ts's import.
const root = process.cwd()
const TSC = join(root, 'node_modules/typescript/lib/tsc.js')
const OPTIONS = [
  '--ignoreConfig',
  '--noEmit',
  '--strict',
  '--skipLibCheck',
  '--target',
  'es2022',
  '--moduleResolution',
  'bundler',
  '--module',
  'esnext',
  '--lib',
  'es2022,dom',
  '--allowJs',
  '--checkJs',
  '--pretty',
  'false'
]

/** Compiles `files`; returns the compiler's diagnostics, '' when there are none. */
function compile(...files: string[]): string {
  try {
    execFileSync(process.execPath, [TSC, ...OPTIONS, ...files], { cwd: root, encoding: 'utf8' })
    return ''
  } catch (error) {
    const { stdout, stderr } = error as { stdout: string; stderr: string }
    return (stdout + stderr).trim() || String(error)
  }
}

describe("Shopify payloads against @shopify/web-pixels-extension's types", () => {
  it('test/shopify/events.ts and demo/shopify/checkout.mjs type-check', () => {
    expect(compile('test/shopify/events.ts')).toBe('')
  })

  it('a payload with an amount as text is refused, so the check above can fail', () => {
    // The builders' return types come from the package: a checkout whose total is text, not a
    // number, must not compile.
    const file = join(mkdtempSync(join(tmpdir(), 'shopify-types-')), 'wrong.ts')
    writeFileSync(
      file,
      `import { checkoutCompleted, sampleOrder } from ${JSON.stringify(join(root, 'test/shopify/events'))}
const right = checkoutCompleted(sampleOrder())
export const wrong: typeof right = { checkout: { ...right.checkout, totalPrice: { amount: '143.70', currencyCode: 'EUR' } } }
`
    )
    expect(compile(file)).toMatch(/TS2322: Type 'string' is not assignable to type 'number'/)
  })
})
