import { nanoid } from 'nanoid'
import { jsonOf, type Packed } from '../shared/batch'
import { attempt } from './attempt'

/**
 * A queued event. `json` is its wire text, made once; `key` its own storage key; `sending` is
 * set while a request carries it; `handed` is when the page handed it to the browser on its
 * way out (a beacon, or a request still in flight as the page went): delivered in all
 * likelihood, but unconfirmed.
 */
export interface Entry extends Packed {
  key?: string
  sending?: boolean
  handed?: number
}

export type DropReason = 'overflow' | 'expired'

/*
 * Storage layout, one key per event so that tracking, delivering and marking an event each
 * write one key, however long the queue:
 *   df_q_<outbox>        the page holding that outbox: its outbox id, '' once it let go
 *   df_q_<outbox>.<n>    one event: its wire text, after the time it was handed over if it was
 * ('.' is not in nanoid's alphabet, so it always separates the outbox id from the number.)
 */
const PREFIX = 'df_q_'
// Bounds, so a collector that stays down cannot fill the site's 5 MB of localStorage:
// 2,000 events (a 1,000-event burst fits twice), 1 MiB of JSON, 7 days.
export const MAX_EVENTS = 2000
export const MAX_CHARS = 1 << 20
export const MAX_AGE = 7 * 864e5

/** An event's stored text: its wire text, after the time it was handed over if it was. */
const stored = (entry: Entry) => (entry.handed || '') + jsonOf(entry)

/**
 * The durable queue. localStorage rather than IndexedDB: it is synchronous, so an event is on
 * disk before the task that tracked it ends (a crash a moment later keeps it), and it is there
 * to read in pagehide, where IndexedDB's callbacks may never run.
 *
 * Each page has an outbox id and holds a Web Lock of that name while it lives. A page that
 * finds events whose holder is gone (closed, crashed, navigated away) adopts them: it writes
 * its id as their holder, one key per outbox, and sends them here, once. The events keep their
 * keys, so adoption costs no write per event.
 */
export function createOutbox(onDrop: (entries: Entry[], reason: DropReason) => void) {
  const id = nanoid(10)
  const locks = navigator.locks
  // Looked up once: in Chromium every read of window.localStorage costs about as much as
  // the rest of a tracked click.
  const storage = attempt(() => localStorage)
  // The outboxes this page holds, by their record's key: its own and those it adopted.
  const held = new Set([PREFIX + id])
  let entries: Entry[] = []
  // Off until consent allows storage (setPersist).
  let persist = false
  // The JSON text held, kept as events come and go: summing it per event would cost a walk
  // of the queue on every click.
  let chars = 0
  let keys = 0
  let wanted = false
  let unlock: (() => void) | undefined

  /** Runs storage work where it is allowed; a throw (quota, blocked) leaves memory the only copy. */
  const onDisk = (work: (storage: Storage) => void) => {
    if (persist && storage) attempt(() => work(storage))
  }
  const claim = () => onDisk((storage) => held.forEach((outbox) => storage.setItem(outbox, id)))
  const write = (entry: Entry) => onDisk((storage) => storage.setItem((entry.key ||= PREFIX + id + '.' + (keys++).toString(36)), stored(entry)))
  const erase = (gone: Entry[]) => onDisk((storage) => gone.forEach((entry) => entry.key && storage.removeItem(entry.key)))
  /**
   * Holds this page's Web Lock while it has events, so no other page takes them, and lets it
   * go once it has none: Firefox keeps a page that holds a lock out of its back/forward cache.
   * A request still waiting for the lock counts as held for adoption too.
   */
  const hold = (want: boolean) => {
    if (!locks || want == wanted) return
    wanted = want
    if (want) {
      locks.request(PREFIX + id, () => new Promise<void>((resolve) => (wanted ? (unlock = resolve) : resolve()))).catch(() => {})
    } else if (unlock) {
      unlock()
      unlock = undefined
    }
  }

  const without = (gone: Entry[]) => {
    const set = new Set(gone)
    entries = entries.filter((entry) => {
      if (!set.has(entry)) return true
      chars -= jsonOf(entry).length
      return false
    })
    erase(gone)
    hold(entries.length > 0)
  }

  return {
    /** Events in order, oldest first. */
    get entries() {
      return entries
    },

    /**
     * Queues an event and writes it under its own key, before the task that tracked it ends;
     * the bounds drop the oldest first.
     */
    add(entry: Entry) {
      // Written again when the page had let it go: another page may have cleared it meanwhile.
      if (!entries.length) claim()
      hold(true)
      entries.push(entry)
      chars += jsonOf(entry).length
      write(entry)
      let cut = 0
      for (let left = chars; entries.length - cut > MAX_EVENTS || left > MAX_CHARS; ) left -= jsonOf(entries[cut++]).length
      if (cut) {
        const dropped = entries.slice(0, cut)
        without(dropped)
        onDrop(dropped, 'overflow')
      }
    },

    /** Delivered or given up: gone from memory and disk. */
    remove: without,

    /** Handed to the browser on the page's way out (`at`), or back to waiting (no `at`). */
    mark(marked: Entry[], at?: number) {
      marked.forEach((entry) => {
        entry.handed = at
        if (entry.key) write(entry)
      })
    },

    /** Takes over the outboxes of pages that are gone; resolves how many events it adopted. */
    adopt(): Promise<number> {
      let adopted = 0
      const take = (alive: (holder: string) => boolean) => {
        onDisk((storage) => {
          const found: Record<string, string[]> = {}
          for (const key of Object.keys(storage)) {
            const [outbox, event] = key.split('.')
            if (outbox.startsWith(PREFIX)) (found[outbox] ||= []).push(...(event ? [key] : []))
          }
          for (const outbox of Object.keys(found)) {
            const holder = storage.getItem(outbox)
            if (held.has(outbox) || (holder && alive(holder))) continue
            // A record without events is left from a page that had nothing to send.
            if (!found[outbox].length) storage.removeItem(outbox)
            else {
              held.add(outbox)
              storage.setItem(outbox, id)
            }
            for (const key of found[outbox]) {
              const value = storage.getItem(key)!
              const start = value.indexOf('{')
              try {
                const event = JSON.parse(value.slice(start))
                if (!event.event_id) throw event
                entries.push({ event, json: value.slice(start), key, handed: +value.slice(0, start) || undefined })
                chars += value.length - start
                adopted++
              } catch {
                // Written by someone else or cut short: nothing we can send.
                storage.removeItem(key)
              }
            }
          }
          const oldest = Date.now() - MAX_AGE
          const expired = entries.filter((entry) => entry.event.t_client < oldest)
          if (expired.length) {
            without(expired)
            onDrop(expired, 'expired')
          }
          entries.sort((a, b) => a.event.t_client - b.event.t_client)
          hold(entries.length > 0)
        })
        return adopted
      }
      // Without Web Locks only an outbox whose page let go of it on pagehide is free.
      if (!locks) return Promise.resolve(take(() => true))
      // One page adopts at a time, so two tabs never take the same outbox.
      return locks
        .request(PREFIX, () =>
          locks.query().then((state) => {
            const names = new Set([...(state.held || []), ...(state.pending || [])].map((lock) => lock.name))
            return take((holder) => names.has(PREFIX + holder))
          })
        )
        .catch(() => 0)
    },

    /**
     * Leaving (pagehide): lets the next page adopt what is left at once. If this page comes
     * back from the back/forward cache, `resume` takes back only what nobody adopted.
     */
    suspend() {
      hold(false)
      onDisk((storage) => held.forEach((outbox) => storage.setItem(outbox, '')))
    },
    resume() {
      onDisk((storage) => {
        for (const outbox of held) {
          const holder = storage.getItem(outbox)
          if (holder && holder != id) {
            // Adopted by another page while this one was away: its events are that page's now.
            held.delete(outbox)
            entries = entries.filter((entry) => !entry.key || !entry.key.startsWith(outbox + '.'))
          }
        }
      })
      chars = 0
      entries.forEach((entry) => {
        chars += jsonOf(entry).length
        // A request cut short by the cache may never answer: what it carried is unconfirmed now.
        entry.sending = false
      })
      claim()
      hold(entries.length > 0)
    },

    /** Whether events may be written to storage (consent, storage mode); off leaves them in memory. */
    setPersist(on: boolean) {
      persist = on
      if (on) {
        claim()
        entries.forEach(write)
      }
    },

    /** Consent withdrawn: drops every queued event and deletes every outbox of this site. */
    forget() {
      persist = false
      entries = []
      chars = 0
      attempt(() => {
        if (storage) for (const key of Object.keys(storage)) if (key.startsWith(PREFIX)) storage.removeItem(key)
      })
    }
  }
}

export type Outbox = ReturnType<typeof createOutbox>
