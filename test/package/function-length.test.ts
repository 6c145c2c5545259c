// @vitest-environment node
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

// CONTRIBUTING.md "How the code is laid out": no function runs over 60 lines of its own. A function's own
// lines are the lines it spans less those of the functions written inside it, so a factory is
// measured apart from the closures it returns, and each closure on its own.
const LIMIT = 60
const src = join(process.cwd(), 'src')

const sources = (folder: string): string[] =>
  readdirSync(folder, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(folder, entry.name)) : entry.name.endsWith('.ts') ? [join(folder, entry.name)] : []
  )

const isFunction = (node: ts.Node): node is ts.FunctionLikeDeclaration =>
  ts.isFunctionDeclaration(node) ||
  ts.isFunctionExpression(node) ||
  ts.isArrowFunction(node) ||
  ts.isMethodDeclaration(node) ||
  ts.isGetAccessor(node) ||
  ts.isSetAccessor(node) ||
  ts.isConstructorDeclaration(node)

/** What a reader calls the function: its name, the variable or property it is given to, or where it starts. */
function nameOf(node: ts.FunctionLikeDeclaration, at: number): string {
  if (node.name) return node.name.getText()
  const parent = node.parent
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && parent.name) return parent.name.getText()
  return `the function on line ${at}`
}

/** Every function of a source file with the count of its own lines. */
function ownLines(fileName: string, text: string): { name: string; line: number; lines: number }[] {
  const file = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true)
  const lineOf = (position: number) => file.getLineAndCharacterOfPosition(position).line
  const spanOf = (node: ts.Node) => {
    const lines: number[] = []
    for (let line = lineOf(node.getStart()); line <= lineOf(node.end); line++) lines.push(line)
    return lines
  }
  const found: { name: string; line: number; lines: number }[] = []
  const visit = (node: ts.Node, nestedInOwner: Set<number> | undefined) => {
    if (!isFunction(node)) return ts.forEachChild(node, (child) => visit(child, nestedInOwner))
    const span = spanOf(node)
    span.forEach((line) => nestedInOwner?.add(line))
    const nested = new Set<number>()
    ts.forEachChild(node, (child) => visit(child, nested))
    const line = span[0] + 1
    found.push({ name: nameOf(node, line), line, lines: span.filter((at) => !nested.has(at)).length })
  }
  visit(file, undefined)
  return found
}

describe('the length of functions', () => {
  it(`finds no function in src/ over ${LIMIT} lines of its own`, () => {
    const long = sources(src).flatMap((file) =>
      ownLines(file, readFileSync(file, 'utf8'))
        .filter((fn) => fn.lines > LIMIT)
        .map((fn) => `${relative(src, file)}:${fn.line} ${fn.name}: ${fn.lines} lines`)
    )
    expect(long).toEqual([])
  })

  it('counts a closure apart from the factory that holds it', () => {
    const body = (count: number) => Array.from({ length: count }, (_, at) => `  const value${at} = ${at}`).join('\n')
    const text = `export function factory() {\n${body(10)}\n  const closure = () => {\n${body(70)}\n  }\n  return closure\n}\n`
    const measured = ownLines('example.ts', text)
    expect(measured.find((fn) => fn.name == 'closure')?.lines).toBe(72)
    // The factory's line that opens the closure belongs to the closure.
    expect(measured.find((fn) => fn.name == 'factory')?.lines).toBe(13)
  })
})
