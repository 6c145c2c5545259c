import { listen } from './listen'

type HistoryMethod = 'pushState' | 'replaceState'

/**
 * Calls back on every SPA navigation: pushState or replaceState that changed the URL, and
 * popstate (back, forward, hash links). Routers call history directly, so its methods are
 * wrapped; when `signal` aborts they are restored. When another script wrapped them after
 * us, ours stays in its chain, so that script's wrapper keeps working, and still calls back:
 * `callback` checks `signal` itself.
 */
export function onNavigate(callback: () => void, signal: AbortSignal) {
  for (const name of ['pushState', 'replaceState'] as HistoryMethod[]) {
    const original = history[name]
    const wrapper = function (this: History, ...args: Parameters<History[HistoryMethod]>) {
      const before = location.href
      original.apply(this, args)
      if (location.href != before) callback()
    }
    history[name] = wrapper
    signal.addEventListener('abort', () => history[name] == wrapper && (history[name] = original))
  }
  listen(window, 'popstate', callback, signal)
}
