import { attempt } from '../shared/attempt'

/** gtag's form: `function gtag(){dataLayer.push(arguments)}` pushes real `Arguments` objects, and gtag.js reads nothing else. */
export const isArguments = (entry: unknown): entry is IArguments => Object.prototype.toString.call(entry) == '[object Arguments]'

// Entries that one push may bring about while its own are read (a GTM tag or a reader's own work
// pushing again, and again). Past this many, the rest of the chain is not read: a reader that
// pushes for every entry it reads would otherwise keep the page's push busy for ever. The
// page's own push is read whole, however many entries it holds.
const MAX_ENTRIES_PER_PUSH = 1000

/**
 * The data layer to follow: the one given, or the page's `window.dataLayer`, created as `[]`
 * the way gtag's and GTM's snippets create it, so that they push into the array we follow.
 * Anything but an array (a page's own `dataLayer` object, a wrong option) is left alone:
 * undefined is returned.
 */
export function pageDataLayer(given?: unknown): unknown[] | undefined {
  let dataLayer = given
  if (dataLayer === undefined && typeof window == 'object') {
    const page = window as Window & { dataLayer?: unknown }
    if (page.dataLayer === undefined) page.dataLayer = []
    dataLayer = page.dataLayer
  }
  return Array.isArray(dataLayer) ? dataLayer : undefined
}

/**
 * Hands `read` every entry of the data layer, one at a time: those already in it from index
 * `from` on, then those of each later push. `push` is wrapped, chaining to the push that was
 * there (GTM's, or another script's), which runs first so that GTM and gtag see an entry before
 * us; ours runs even if that push throws, and the page's own error is left to the page. A
 * script that wraps `push` after us keeps ours in its chain.
 *
 * Entries are read in the order they were pushed, never one inside another: an entry pushed
 * while another is handled (by a GTM tag inside GTM's push, or by `read`'s own work) waits for
 * the entries before it.
 *
 * Returns the function that stops, at once, even in the middle of a push: it restores the old
 * push if ours is still the data layer's, and otherwise ours only passes the pushes on.
 */
export function followDataLayer(dataLayer: unknown[], read: (entry: unknown) => void, from = 0): () => void {
  let stopped = false
  // Entries to read, oldest first, and the index of the next one. Indexes rather than shift():
  // a page may have replaced Array.prototype's methods, and we never call them on this array.
  let waiting: unknown[] = []
  let next = 0
  // True from the outermost push until every entry it brought about has been read.
  let busy = false
  let broughtAbout = 0

  const queue = (entries: ArrayLike<unknown>, start = 0, end = entries.length) => {
    for (let index = start; index < end; index++) waiting[waiting.length] = entries[index]
  }
  const readWaiting = () => {
    try {
      // One at a time, checking `stopped` before each: a reader may stop us in the middle.
      while (next < waiting.length && !stopped) {
        const entry = waiting[next++]
        // Nothing read may throw into the page's call to push.
        attempt(() => read(entry))
      }
    } finally {
      waiting = []
      next = 0
      busy = false
    }
  }

  const previous = dataLayer.push
  const ours = function (this: unknown, ...entries: unknown[]) {
    const outermost = !busy
    // Queued before the old push runs, so that entries its tags push come after these.
    if (outermost) {
      busy = true
      broughtAbout = 0
      if (!stopped) queue(entries)
    } else if (!stopped) {
      // Pushed while the outermost push is read: only as many as the cap still allows.
      const room = Math.max(0, MAX_ENTRIES_PER_PUSH - broughtAbout)
      queue(entries, 0, Math.min(entries.length, room))
      broughtAbout += entries.length
    }
    try {
      return previous.apply(this, entries)
    } finally {
      if (outermost) readWaiting()
    }
  }
  // Wrapped before the entries already there are read, so that one pushed meanwhile is read after them.
  dataLayer.push = ours
  const stop = () => {
    stopped = true
    if (dataLayer.push === ours) dataLayer.push = previous
  }
  try {
    busy = true
    queue(dataLayer, from)
    readWaiting()
  } catch (error) {
    // Whatever failed, the page keeps the push it had.
    stop()
    throw error
  }
  return stop
}
