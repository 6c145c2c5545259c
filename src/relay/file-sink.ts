import type { Sink } from './types'

// The part of Node's file module the file sink uses: the package needs no @types/node.
type FileHandle = { appendFile(data: string): Promise<void>; stat(): Promise<{ size: number }>; close(): Promise<void> }
type FileModule = { open(path: string, flags: string): Promise<FileHandle>; rename(from: string, to: string): Promise<void> }

/** Options of `fileSink`. */
export interface FileSinkOptions {
  /**
   * Bytes the file may hold: a write that would take it past this first renames it to
   * `<path>.1`, replacing the one there, and starts the file anew, so that the two files hold
   * at most twice this. For dead letters, whose volume a sender decides; an event sink that
   * rotates loses the older file's events at the second rotation. Default: none, the file grows.
   */
  maxBytes?: number
}

/**
 * Appends each accepted event as one line of an NDJSON file, resolving once the lines are
 * written. Writes go one after another through one file handle, so that lines of two batches
 * never interleave. Node only: the file module is loaded on first use, so the relay's entry
 * still loads on platforms without it. Any objects go as they are: it serves as a dead-letter
 * sink too, where `maxBytes` bounds the disk it takes.
 * @param path - The NDJSON file to append to.
 * @param options - `maxBytes`, to bound the disk it takes.
 */
export function fileSink(path: string, options: FileSinkOptions = {}): Sink<object> {
  const { maxBytes } = options
  let files: Promise<FileModule> | undefined
  let handle: Promise<FileHandle> | undefined
  // Bytes in the file, once known (maxBytes only).
  let size: number | undefined
  let turn: Promise<unknown> = Promise.resolve()

  /** Renames a full file away and opens a new one, when `bytes` more would take it past maxBytes. */
  async function rotateFor(fs: FileModule, bytes: number) {
    size ??= (await (await handle!).stat()).size
    if (!size || size + bytes <= maxBytes!) return
    await (await handle!).close()
    await fs.rename(path, path + '.1')
    handle = fs.open(path, 'a')
    size = 0
  }

  return (events) => {
    const write = turn.then(async () => {
      // A specifier in a variable: bundlers for platforms without files leave it alone.
      const module = 'node:fs/promises'
      files ||= import(module) as Promise<FileModule>
      const fs = await files
      handle ||= fs.open(path, 'a')
      const text = events.map((event) => JSON.stringify(event) + '\n').join('')
      const bytes = maxBytes ? new TextEncoder().encode(text).length : 0
      if (maxBytes) await rotateFor(fs, bytes)
      await (await handle).appendFile(text)
      if (maxBytes) size! += bytes
    })
    turn = write.catch(() => {})
    return write
  }
}
