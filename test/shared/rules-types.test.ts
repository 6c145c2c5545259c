// @vitest-environment node
import { join } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

/*
 * The rule tables (src/shared/rules.ts, and the relay's user in src/relay/envelopes.ts) and the
 * public types they check (src/shared/types.ts) cannot drift apart: each edit below that makes
 * them disagree fails to compile, on the line of the field at fault. The files are compiled as
 * they are, with one edit made in memory.
 */
const ROOT = process.cwd()
const FILES = {
  rules: join(ROOT, 'src/shared/rules.ts'),
  types: join(ROOT, 'src/shared/types.ts'),
  relay: join(ROOT, 'src/relay/envelopes.ts')
}
type File = keyof typeof FILES

const options = (() => {
  const { config } = ts.readConfigFile(join(ROOT, 'tsconfig.json'), ts.sys.readFile)
  return { ...ts.convertCompilerOptionsFromJson(config.compilerOptions, ROOT).options, noEmit: true }
})()

// The standard library's files, parsed once for every compilation.
const parsed = new Map<string, ts.SourceFile | undefined>()
const baseHost = ts.createCompilerHost(options)

/** The errors of compiling the tables and the types with `from` replaced by `to` in one file: each as the line it is on. */
function errorsWith(file: File, from: string, to: string): string[] {
  const path = FILES[file]
  const original = ts.sys.readFile(path)!
  // An edit that finds nothing to replace would prove nothing.
  expect(original).toContain(from)
  const edited = original.replace(from, to)
  const host: ts.CompilerHost = {
    ...baseHost,
    getSourceFile(name, language) {
      if (name == path) return ts.createSourceFile(name, edited, language)
      if (!parsed.has(name)) parsed.set(name, baseHost.getSourceFile(name, language))
      return parsed.get(name)
    }
  }
  const program = ts.createProgram(Object.values(FILES), options, host)
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    if (!diagnostic.file || diagnostic.start == null) return ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start)
    return diagnostic.file.text.split('\n')[line].trim()
  })
}

describe('the rule tables and the public types', () => {
  it('agree as they are', () => {
    expect(errorsWith('rules', '', '')).toEqual([])
  })

  it.each<[string, File, string, string, string]>([
    ['a kind whose values are of another type', 'rules', 'revenue: Kind.amount', 'revenue: Kind.text', 'revenue'],
    ['a line item field of another kind', 'rules', 'unit_price: Kind.amount', 'unit_price: Kind.text', 'unit_price'],
    ['a user field of another kind', 'rules', 'lang: Kind.optionalLanguages', 'lang: Kind.optionalText', 'lang'],
    [
      'a field the type does not have',
      'rules',
      'line_items: Kind.lineItems\n  },',
      'line_items: Kind.lineItems,\n    coupon: Kind.optionalText\n  },',
      'coupon'
    ],
    ['a field of the type left out', 'rules', '    affiliation: Kind.optionalText,\n', '', 'purchase'],
    ['a required field made optional', 'rules', 'order_id: Kind.text', 'order_id: Kind.optionalText', 'order_id'],
    ['an optional field made required', 'rules', 'total_tax: Kind.optionalAmount', 'total_tax: Kind.amount', 'total_tax'],
    ["a page view's filled-in field made optional", 'rules', 'width: Kind.wholeNumber', 'width: Kind.optionalAmount', 'width'],
    ['a letter in place of a kind', 'rules', "'click-suggestion': { rid: Kind.text", "'click-suggestion': { rid: 's'", 'click-suggestion'],
    ["the relay's user without a required id", 'relay', 'uid: Kind.id', 'uid: Kind.optionalId', 'uid'],
    ["a type's field of another type", 'types', '  revenue: number', '  revenue: string', 'revenue'],
    ["a type's field made optional", 'types', '    currency: string', '    currency?: string', 'currency'],
    ["a type's new field", 'types', '    affiliation?: string\n', '    affiliation?: string\n    coupon?: string\n', 'purchase']
  ])('disagree, and do not compile, with %s', (_, file, from, to, field) => {
    const errors = errorsWith(file, from, to)
    expect(errors).not.toEqual([])
    expect(errors.join('\n')).toContain(field)
  })
})
