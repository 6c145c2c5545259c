/**
 * Holds a page's Web Lock named `name` while it has events, so that no other page takes them
 * (outbox.ts), and lets it go once it has none: Firefox keeps a page that holds a lock out of its
 * back/forward cache. A request still waiting for the lock counts as held for adoption too.
 * Without Web Locks it holds nothing. Returns `hold(want)`.
 */
export function lockHolder(locks: LockManager | undefined, name: string) {
  // Set while this page wants the lock: the lock is held until it runs. Let go before the
  // browser granted it, the lock is given back as soon as it is.
  let release: (() => void) | undefined
  return (want: boolean) => {
    if (!locks) return
    if (want && !release) {
      const released = new Promise<void>((resolve) => (release = resolve))
      locks.request(name, () => released).catch(() => {})
    } else if (!want && release) {
      release()
      release = undefined
    }
  }
}
