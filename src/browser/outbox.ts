import { randomId } from '../shared/random-id'
import { jsonOf, type Packed } from '../shared/batch'
import type { Unidentified } from '../shared/envelope'
import type { Envelope } from '../shared/types'
import { attempt } from '../shared/attempt'
import { OUTBOX_PREFIX } from '../shared/ids'
import type { DropReason, Queued } from '../shared/engine'
import { lockHolder } from './outbox-lock'

/**
 * A queued event: without its user while consent is pending (Unidentified). `wire` is its JSON
 * text, made once; `key` its own storage key; `sending` is set while a request carries it;
 * `handed` is when the page handed it to the browser on its way out (a beacon, or a request
 * still in flight as the page went): delivered in all likelihood, but unconfirmed.
 */
export interface Entry extends Packed<Envelope | Unidentified>, Pick<Queued, 'sending'> {
  key?: string
  handed?: number
}

/** What the outbox itself gives up: beyond its bound, or older than a kept event may be. */
export type OutboxDropReason = Extract<DropReason, 'overflow' | 'expired'>

/*
 * Storage layout, one key per event so that tracking, delivering and marking an event each
 * write one key, however long the queue:
 *   df_q_<page>.<n>    one event of the page with that outbox id: its wire text, after the
 *                      time it was handed over if it was
 *   df_q_<page>        written when that page went (pagehide): its events are free to take
 * ('.' is not in an id's alphabet (shared/random-id.ts), so it always separates the outbox id from the number.)
 */
// Bounds, so a collector that stays down cannot fill the site's 5 MB of localStorage:
// 2,000 events (a 1,000-event burst fits twice), 1 MiB of JSON, 7 days.
export const MAX_EVENTS = 2000
export const MAX_CHARS = 1 << 20
export const MAX_AGE = 7 * 864e5

/**
 * The durable queue. localStorage rather than IndexedDB: it is synchronous, so an event is on
 * disk before the task that tracked it ends (a crash a moment later keeps it), and it is there
 * to read in pagehide, where IndexedDB's callbacks may never run.
 *
 * Each page has an outbox id and holds a Web Lock of that name while it has events. A page
 * that finds events whose page is gone (closed, crashed, navigated away) adopts them: it moves
 * each under its own id and sends it here, once. Adoption is rare (a collector that was down,
 * a tab that closed), so it may cost a write per event; tracking never pays for it.
 */
export function createOutbox(onDrop: (entries: Entry[], reason: OutboxDropReason) => void) {
  // This page's outbox: its Web Lock's name, and its events' keys before the number.
  const own = OUTBOX_PREFIX + randomId(10)
  const locks = navigator.locks
  // Looked up once: in Chromium every read of window.localStorage costs about as much as
  // the rest of a tracked click.
  const storage = attempt(() => localStorage)
  let entries: Entry[] = []
  // Off until consent allows storage (setPersist).
  let persist = false
  // The JSON text held, kept as events come and go: summing it per event would cost a walk
  // of the queue on every click.
  let chars = 0
  let keys = 0

  /** Runs storage work where it is allowed, and returns its result; a throw (quota, blocked) leaves memory the only copy. */
  const onDisk = <T>(work: (storage: Storage) => T) => (persist && storage ? attempt(() => work(storage)) : undefined)
  /**
   * Writes an event under its own key, given the first time (this outbox's id and a number): its
   * wire text, after the time it was handed over if it was. Returns whether storage took it.
   */
  const write = (entry: Entry) =>
    onDisk((storage) => {
      entry.key ||= own + '.' + (keys++).toString(36)
      storage.setItem(entry.key, (entry.handed || '') + jsonOf(entry))
      return true
    })
  const hold = lockHolder(locks, own)

  /** Keeps an event in memory and, where allowed, under its own key; the lock says it is taken. */
  const keep = (entry: Entry) => {
    hold(true)
    entries.push(entry)
    chars += jsonOf(entry).length
    return write(entry)
  }
  /** Takes events out of memory and out of storage; the lock goes with the last one. */
  const without = (gone: Entry[]) => {
    const set = new Set(gone)
    entries = entries.filter((entry) => {
      if (!set.has(entry)) return true
      chars -= jsonOf(entry).length
      return false
    })
    onDisk((storage) => {
      for (const entry of gone) if (entry.key) storage.removeItem(entry.key)
    })
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
      keep(entry)
      // How many of the oldest must go for the rest to fit both bounds.
      let cut = 0
      let left = chars
      while (entries.length - cut > MAX_EVENTS || left > MAX_CHARS) {
        left -= jsonOf(entries[cut]).length
        cut++
      }
      if (cut) {
        const dropped = entries.slice(0, cut)
        without(dropped)
        onDrop(dropped, 'overflow')
      }
    },

    /** Delivered or given up: gone from memory and disk. */
    remove: without,

    /** An event changed (it got its user once consent was given): its text is made, counted and written anew. */
    rewrite(entry: Entry, event: Envelope) {
      chars -= jsonOf(entry).length
      entry.event = event
      entry.wire = undefined
      chars += jsonOf(entry).length
      write(entry)
    },

    /** Handed to the browser on the page's way out (`at`), or back to waiting (no `at`). */
    mark(marked: Entry[], at?: number) {
      for (const entry of marked) {
        entry.handed = at
        write(entry)
      }
    },

    /** Takes over the events of pages that are gone; resolves how many it adopted. */
    async adopt(): Promise<number> {
      const take = (alive: (outbox: string) => boolean) => {
        let adopted = 0
        onDisk((storage) => {
          const oldest = Date.now() - MAX_AGE
          const expired: Entry[] = []
          // Which pages are gone is settled before anything moves: taking an outbox deletes
          // the record that says it is free.
          const free = Object.keys(storage).filter((key) => {
            const outbox = key.split('.')[0]
            return outbox.startsWith(OUTBOX_PREFIX) && outbox != own && !alive(outbox) && !entries.some((entry) => entry.key == key)
          })
          for (const key of free) {
            const value = storage.getItem(key)!
            const start = value.indexOf('{')
            try {
              const event = JSON.parse(value.slice(start))
              if (!event.event_id) throw event
              const entry: Entry = { event, wire: value.slice(start), handed: +value.slice(0, start) || undefined }
              if (event.t_client < oldest) expired.push(entry)
              else {
                adopted++
                // Moved under this page's key. Where storage cannot take the copy (full), the
                // event stays under the gone page's key: held in this page's memory alone, it
                // would be lost should this page go too before it is sent.
                if (!keep(entry)) {
                  entry.key = key
                  continue
                }
              }
            } catch {
              // A record that the page went, or an event written by someone else or cut short.
            }
            storage.removeItem(key)
          }
          if (expired.length) onDrop(expired, 'expired')
          entries.sort((a, b) => a.event.t_client - b.event.t_client)
        })
        return adopted
      }
      // Most loads find nothing another page left: they take no lock and ask the browser nothing.
      if (!onDisk((storage) => Object.keys(storage).some((key) => key.startsWith(OUTBOX_PREFIX) && !key.startsWith(own)))) return 0
      // Without Web Locks only the events of a page that said it went (pagehide) are free.
      if (!locks) return take((outbox) => storage!.getItem(outbox) == null)
      // One page adopts at a time, so two tabs never take the same events.
      return locks
        .request(OUTBOX_PREFIX, () =>
          locks.query().then((state) => {
            const names = [...(state.held || []), ...(state.pending || [])].map((lock) => lock.name)
            return take((outbox) => names.includes(outbox))
          })
        )
        .catch(() => 0)
    },

    /**
     * Leaving (pagehide): lets the next page adopt what is left at once. If this page comes
     * back from the back/forward cache, `resume` keeps only what nobody adopted.
     */
    suspend() {
      hold(false)
      onDisk((storage) => storage.setItem(own, ''))
    },
    resume() {
      onDisk((storage) => storage.removeItem(own))
      // Adopted by another page while this one was away: those events are that page's now.
      without(entries.filter((entry) => entry.key && onDisk((storage) => storage.getItem(entry.key!) == null)))
    },

    /** Whether events may be written to storage (consent, storage mode); off leaves them in memory. */
    setPersist(on: boolean) {
      persist = on
      if (on) entries.forEach(write)
    },

    /** Consent withdrawn: drops every queued event, as delivered ones go, and deletes every outbox of this site. */
    forget() {
      persist = false
      without(entries)
      attempt(() => {
        if (storage) for (const key of Object.keys(storage)) if (key.startsWith(OUTBOX_PREFIX)) storage.removeItem(key)
      })
    }
  }
}

export type Outbox = ReturnType<typeof createOutbox>
