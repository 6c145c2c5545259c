type HistoryMethod = 'pushState' | 'replaceState'

/**
 * Calls back on every SPA navigation: pushState or replaceState that changed the URL, and
 * popstate (back, forward, hash links). Routers call history directly, so its methods are
 * wrapped; the returned function restores them, or makes the wrapper inert when another
 * script wrapped them after us, so that script's wrapper keeps working.
 */
export function onNavigate(callback: () => void): () => void {
  let active = true
  const wrap = (name: HistoryMethod) => {
    const original = history[name]
    const wrapper = function (this: History, ...args: Parameters<History[HistoryMethod]>) {
      const before = location.href
      original.apply(this, args)
      if (active && location.href != before) callback()
    }
    history[name] = wrapper
    return () => {
      if (history[name] == wrapper) history[name] = original
    }
  }
  const restore = [wrap('pushState'), wrap('replaceState')]
  addEventListener('popstate', callback)
  return () => {
    active = false
    restore.forEach((undo) => undo())
    removeEventListener('popstate', callback)
  }
}
