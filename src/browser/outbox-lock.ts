/**
 * Holds a page's Web Lock named `name` while it has events, so that no other page takes them
 * (outbox.ts), and lets it go once it has none: Firefox keeps a page that holds a lock out of its
 * back/forward cache. A request still waiting for the lock counts as held for adoption too.
 * Without Web Locks it holds nothing. Returns `hold(want)`.
 */
export function lockHolder(locks: LockManager | undefined, name: string) {
  let wanted = false
  let unlock: (() => void) | undefined
  return (want: boolean) => {
    if (!locks || want == wanted) return
    wanted = want
    if (want) {
      // Held until `unlock` runs; let go at once if this page stopped wanting it meanwhile.
      const held = () =>
        new Promise<void>((resolve) => {
          if (wanted) unlock = resolve
          else resolve()
        })
      locks.request(name, held).catch(() => {})
    } else if (unlock) {
      unlock()
      unlock = undefined
    }
  }
}
