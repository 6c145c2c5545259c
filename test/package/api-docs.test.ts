// @vitest-environment node
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { errorsOf } from '../../scripts/api-extractor.mjs'

// `npm run api` fails on a public function, method, option or type without its sentence of
// TSDoc: the API reference is made from them. Run on the built declarations (`npx rollup -c` first).

describe('the API reference has no blanks', () => {
  it('finds every public member of the server entry documented', () => {
    expect(errorsOf('server', 'dist/server.d.ts', 'temp/api-test')).toEqual([])
  })

  it('fails on an option without its sentence, naming it', () => {
    mkdirSync('temp/api-test', { recursive: true })
    const declarations = readFileSync('dist/server.d.ts', 'utf8').replace('interface WaitOptions {', 'interface WaitOptions {\n    patience?: number;')
    writeFileSync('temp/api-test/server.d.ts', declarations)
    expect(errorsOf('server', 'temp/api-test/server.d.ts', 'temp/api-test')).toEqual(['ae-undocumented: Missing documentation for "patience".'])
  })
})
