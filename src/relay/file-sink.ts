import type { Sink } from './types'

// The part of Node's file module the file sink uses: the package needs no @types/node.
type FileHandle = { appendFile(data: string): Promise<void> }
type FileModule = { open(path: string, flags: string): Promise<FileHandle> }

/**
 * Appends each accepted event as one line of an NDJSON file, resolving once the lines are
 * written. Writes go one after another through one file handle, so that lines of two batches
 * never interleave. Node only: the file module is loaded on first use, so the relay's entry
 * still loads on platforms without it. Any objects go as they are: it serves as a dead-letter
 * sink too.
 * @param path - The NDJSON file to append to; its folder is made if missing.
 */
export function fileSink(path: string): Sink<object> {
  let handle: Promise<FileHandle> | undefined
  let turn: Promise<unknown> = Promise.resolve()
  return (events) => {
    const write = turn.then(async () => {
      // A specifier in a variable: bundlers for platforms without files leave it alone.
      const module = 'node:fs/promises'
      handle ||= (import(module) as Promise<FileModule>).then((fs) => fs.open(path, 'a'))
      await (await handle).appendFile(events.map((event) => JSON.stringify(event) + '\n').join(''))
    })
    turn = write.catch(() => {})
    return write
  }
}
