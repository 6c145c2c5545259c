import type { Queued } from './engine'

/**
 * The engine's store where nothing outlives the process or the page: the server sender's and
 * the relay's queue, and the Shopify pixel's queue beside its asynchronous copy, which
 * `removed` keeps in step.
 */
export function createMemoryStore<E extends Queued>(removed?: (entries: E[]) => void) {
  let entries: E[] = []
  return {
    /** Entries in order, oldest first. */
    get entries() {
      return entries
    },
    add(entry: E) {
      entries.push(entry)
    },
    remove(gone: E[]) {
      const set = new Set(gone)
      entries = entries.filter((entry) => !set.has(entry))
      removed?.(gone)
    },
    /** Empties the store; returns what it held. */
    clear(): E[] {
      return entries.splice(0)
    }
  }
}

export type MemoryStore<E extends Queued> = ReturnType<typeof createMemoryStore<E>>
