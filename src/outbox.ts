import { nanoid } from 'nanoid'
import { jsonOf } from './batch'
import type { Envelope } from './types'

/**
 * A queued event. `json` is its wire text, made once; `sending` is set while a fetch carries
 * it; `beaconed` once a beacon took it without confirmation.
 */
export interface Entry {
  event: Envelope
  json?: string
  sending?: boolean
  beaconed?: boolean
}

export type DropReason = 'overflow' | 'expired'

const PREFIX = 'df_outbox_'
// Bounds, so a collector that stays down cannot fill the site's 5 MB of localStorage:
// 2,000 events (a 1,000-event burst fits twice), 1 MiB of JSON, 7 days.
export const MAX_EVENTS = 2000
export const MAX_CHARS = 1 << 20
export const MAX_AGE = 7 * 864e5
// Without Web Locks, an outbox not written for this long belongs to a page that is gone.
const STALE = 60000

const store = (): Storage | undefined => {
  try {
    return localStorage
  } catch {
    // Blocked storage throws on mere access (SecurityError).
  }
}

const read = (storage: Storage, key: string): { t: number; q: Entry[] } | undefined => {
  try {
    return JSON.parse(storage.getItem(key)!) || undefined
  } catch {
    // Written by someone else or cut short: nothing we can send.
  }
}

/**
 * The durable queue. localStorage rather than IndexedDB: it is synchronous, so an event is on
 * disk before the task that tracked it ends (a crash a moment later keeps it), and it is there
 * to read in pagehide, where IndexedDB's callbacks may never run.
 *
 * Each page keeps its own key, so tabs never overwrite each other, and holds a Web Lock of the
 * same name while it lives. A page that finds an outbox whose lock nobody holds (its page
 * closed, crashed or navigated away) adopts it: those events are sent here, once.
 */
export function createOutbox(onDrop: (entries: Entry[], reason: DropReason) => void, persistAtStart: boolean) {
  const key = PREFIX + nanoid(10)
  const locks = navigator.locks
  let entries: Entry[] = []
  let persist = persistAtStart
  let saving = false
  let lazy: ReturnType<typeof setTimeout> | undefined
  // Whether the last write reached storage; when it did not, memory is the only copy.
  let durable = false
  // Set on pagehide: the stored outbox says its page is gone, for browsers without Web Locks.
  let released = false
  let release: (() => void) | undefined

  const hold = () => {
    if (locks && !release) locks.request(key, () => new Promise<void>((resolve) => (release = resolve))).catch(() => {})
  }

  const write = () => {
    clearTimeout(lazy)
    lazy = undefined
    const storage = store()
    if (!storage || !persist) return
    try {
      // Each event's text is made once and reused; only the queue around it is written anew.
      const serialise = () => '{"t":' + (released ? 0 : Date.now()) + ',"q":[' + entries.map((entry) => '{"event":' + jsonOf(entry) + '}').join() + ']}'
      let json = serialise()
      while (json.length > MAX_CHARS) {
        onDrop(entries.splice(0, Math.ceil(entries.length / 10)), 'overflow')
        json = serialise()
      }
      if (entries.length) storage.setItem(key, json)
      else storage.removeItem(key)
      durable = true
    } catch {
      // Quota, private mode, disabled: the events stay in memory and are still sent.
      durable = false
    }
  }

  /**
   * Applies the bounds, oldest first, and writes once per task however many events changed:
   * a new event is on disk before the task that tracked it ends. `later`: only events left,
   * which at worst a crash would send twice (the collector keeps one by event_id), so the
   * write waits a second and takes every delivered batch of a burst at once, instead of
   * serialising what remains after each.
   */
  const save = (later?: boolean) => {
    if (entries.length > MAX_EVENTS) onDrop(entries.splice(0, entries.length - MAX_EVENTS), 'overflow')
    if (!persist) return
    if (later) lazy ||= setTimeout(write, 1000)
    else if (!saving) {
      saving = true
      queueMicrotask(() => {
        saving = false
        write()
      })
    }
  }

  hold()

  return {
    /** Events in order, oldest first. */
    get entries() {
      return entries
    },
    add(entry: Entry) {
      entries.push(entry)
      save()
    },
    remove(done: Entry[]) {
      const gone = new Set(done)
      entries = entries.filter((entry) => !gone.has(entry))
      save(true)
    },
    changed: () => save(),

    /** Takes over the outboxes of pages that are gone; resolves how many events it adopted. */
    adopt(): Promise<number> {
      const storage = persist && store()
      if (!storage) return Promise.resolve(0)
      const take = (alive: (key: string, written: number) => boolean) => {
        const known = new Set(entries.map((entry) => entry.event.event_id))
        let adopted = 0
        for (const other of Object.keys(storage)) {
          if (!other.startsWith(PREFIX) || other == key) continue
          const outbox = read(storage, other)
          // t is 0 once its page said goodbye in pagehide, even if the lock is not yet let go.
          if (outbox && outbox.t && alive(other, outbox.t)) continue
          storage.removeItem(other)
          for (const { event } of (outbox && outbox.q) || []) {
            if (event && !known.has(event.event_id)) {
              known.add(event.event_id)
              entries.push({ event })
              adopted++
            }
          }
        }
        const oldest = Date.now() - MAX_AGE
        const expired = entries.filter((entry) => entry.event.t_client < oldest)
        if (expired.length) {
          entries = entries.filter((entry) => !expired.includes(entry))
          onDrop(expired, 'expired')
        }
        entries.sort((a, b) => a.event.t_client - b.event.t_client)
        save()
        return adopted
      }
      if (!locks) return Promise.resolve(take((_, written) => written > Date.now() - STALE))
      // One page adopts at a time, so two tabs never take the same outbox.
      return locks
        .request(PREFIX, () =>
          locks.query().then((state) => {
            const held = new Set((state.held || []).map((lock) => lock.name))
            return take((other) => held.has(other))
          })
        )
        .catch(() => 0)
    },

    /**
     * Leaving (pagehide): let the next page adopt what is left at once. If this page comes
     * back from the back/forward cache, `resume` takes back only what nobody adopted.
     */
    suspend() {
      release && release()
      release = undefined
      released = true
      save()
    },
    resume() {
      released = false
      const storage = store()
      if (storage && persist && durable) {
        const outbox = read(storage, key)
        entries = outbox ? outbox.q.map(({ event }) => ({ event })) : []
      }
      save()
      hold()
    },

    /** Whether events may be written to storage (consent, storage mode); off leaves them in memory. */
    setPersist(on: boolean) {
      persist = on
      if (on) save()
    },

    /** Consent withdrawn: drops every queued event and deletes every outbox of this site. */
    forget() {
      persist = false
      entries = []
      const storage = store()
      try {
        if (storage) for (const other of Object.keys(storage)) if (other.startsWith(PREFIX)) storage.removeItem(other)
      } catch {
        // Nothing stored that could be deleted.
      }
    }
  }
}

export type Outbox = ReturnType<typeof createOutbox>
