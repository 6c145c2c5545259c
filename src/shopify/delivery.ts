import type { BrowserLocalStorage } from '@shopify/web-pixels-extension'
import { jsonOf, pack, type Packed } from '../shared/batch'
import { createBackoff, outcomeOf, withSendTime } from '../shared/http'
import { fnv1a64 } from '../shared/order-event-id'
import { post } from '../shared/post'
import type { Envelope } from '../shared/types'

// Requests in flight: a checkout tracks a handful of events, and every request is a keepalive
// one, which together may hold 64 KiB at most (Fetch standard, "keepalive"). A body is at most
// 60 KiB, as the storefront tracker's.
const MAX_IN_FLIGHT = 2
const KEEPALIVE_BUDGET = 65536
const MAX_BODY = 61440
// Kept events older than this are not sent any more (the storefront outbox's bound too).
const MAX_AGE = 7 * 864e5
const MAX_KEPT = 200

export type PixelEntry = Packed<Envelope> & { sending?: boolean }

export interface PixelCounts {
  sent: number
  retried: number
}

/**
 * Sends a pixel's events: by fetch with keepalive (sendBeacon is deprecated in pixels), a
 * purchase at once and anything else after `interval`, retried under the HTTP policy both other
 * senders follow (shared/http.ts): after a failure, one request at a time until one succeeds.
 *
 * The sandbox has no storage of the shop's except the Standard API's asynchronous
 * `browser.localStorage`: once consent allows, each event is written there as it is queued,
 * under a key of its own, and removed once the collector stored it. An event whose request the
 * closing page cut short is then sent by the pixel on the shopper's next page. Its event id
 * lets the collector store it once.
 */
export function createPixelDelivery(
  { key, endpoint }: { key: string; endpoint: string },
  interval: number,
  storage: BrowserLocalStorage,
  counts: PixelCounts,
  refused: (entries: PixelEntry[], reason: 'rejected' | 'too_large', detail: string) => void
) {
  // Kept events of this key and collector only: a staging and a production pixel on one shop
  // never take each other's.
  const prefix = 'df_pixel_' + fnv1a64(key + ' ' + endpoint).toString(36) + '_'
  const backoff = createBackoff(false)
  let queue: PixelEntry[] = []
  // Requests in flight, each with its body's bytes.
  const inFlight = new Map<object, number>()
  // Ids this page delivered: a kept copy read back after that is not sent again.
  const delivered = new Set<string>()
  let timer: ReturnType<typeof setTimeout> | undefined
  let due = Infinity
  let persist = false
  const idle: (() => void)[] = []

  // Storage is the top frame's, a message away: a failure there (full, blocked, the page
  // going) leaves the event in memory only, and is no reason to stop sending.
  const keep = (entry: PixelEntry) => {
    if (persist) storage.setItem(prefix + entry.event.event_id, jsonOf(entry)).catch(() => {})
  }
  const unkeep = (entries: PixelEntry[]) => entries.forEach((entry) => storage.removeItem(prefix + entry.event.event_id).catch(() => {}))
  /** Our keys in the shop's storage, read in parallel: each is a round trip to the top frame. */
  const keptKeys = async () => {
    const count = await storage.length()
    const keys = await Promise.all(Array.from({ length: count }, (_, index) => storage.key(index)))
    return keys.filter((name): name is string => !!name?.startsWith(prefix))
  }

  const endFlushes = () => idle.splice(0).forEach((resolve) => resolve())
  const settled = () => {
    if (!queue.length && !inFlight.size) endFlushes()
  }

  const schedule = (at: number) => {
    at = Math.max(at, backoff.resumeAt())
    if (at >= due) return
    clearTimeout(timer)
    due = at
    timer = setTimeout(send, Math.max(0, at - Date.now()))
  }

  const without = (gone: PixelEntry[]) => {
    queue = queue.filter((entry) => !gone.includes(entry))
    unkeep(gone)
  }

  /** The collector's answer to one request: the events are delivered, refused, or wait out the backoff. */
  const settle = (entries: PixelEntry[], status: number, retryAfter: string | null | undefined, step: number) => {
    entries.forEach((entry) => (entry.sending = false))
    const outcome = outcomeOf(status)
    if (outcome == 'retry') {
      counts.retried += entries.length
      backoff.failed(step, retryAfter)
      // The events wait out the backoff: a flush() ends here.
      endFlushes()
    } else {
      backoff.answered()
      without(entries)
      if (outcome == 'delivered') {
        counts.sent += entries.length
        entries.forEach((entry) => delivered.add(entry.event.event_id))
      } else refused(entries, 'rejected', 'the collector answered ' + status)
    }
    if (queue.some((entry) => !entry.sending)) schedule(0)
    settled()
  }

  /** Sends what waits, as many bodies as the collector's health and the keepalive budget allow. */
  function send() {
    clearTimeout(timer)
    due = Infinity
    if (Date.now() < backoff.resumeAt()) {
      endFlushes()
      return schedule(backoff.resumeAt())
    }
    const free = backoff.slots(MAX_IN_FLIGHT) - inFlight.size
    // Every slot taken: the next answer sends on.
    if (free <= 0) return
    const tooLarge = (entry: PixelEntry) => {
      without([entry])
      refused([entry], 'too_large', 'too large for a request')
    }
    const waiting = queue.filter((entry) => !entry.sending)
    for (const { body, entries, bytes } of pack(waiting, MAX_BODY, tooLarge, free)) {
      const held = [...inFlight.values()].reduce((sum, size) => sum + size, 0)
      // Over the keepalive budget: this body waits for an answer to free some.
      if (held + bytes > KEEPALIVE_BUDGET) break
      const request = {}
      inFlight.set(request, bytes)
      entries.forEach((entry) => (entry.sending = true))
      const step = backoff.step()
      post(withSendTime(endpoint, Date.now()), body, true).then(({ status, retryAfter }) => {
        inFlight.delete(request)
        settle(entries, status, retryAfter, step)
      })
    }
    settled()
  }

  return {
    get queued() {
      return queue.length
    },

    /** Queues an event: a purchase (`now`) leaves at once, anything else within `interval`. */
    add(entry: PixelEntry, now: boolean) {
      queue.push(entry)
      keep(entry)
      schedule(now ? 0 : Math.min(entry.event.t_client, Date.now()) + interval)
    },

    /**
     * Consent allows storage: events queued so far are written, and those that earlier pages
     * left unsent are taken over and sent. Another open tab may take the same ones: the
     * collector stores each event id once.
     */
    async adopt() {
      persist = true
      queue.forEach(keep)
      try {
        const names = (await keptKeys()).slice(0, MAX_KEPT)
        const texts = await Promise.all(names.map((name) => storage.getItem(name)))
        const oldest = Date.now() - MAX_AGE
        names.forEach((name, index) => {
          let event: Envelope | undefined
          try {
            event = JSON.parse(texts[index]!)
          } catch {
            // Cut short, or written by someone else.
          }
          const id = event?.event_id
          if (!id || event!.key != key || !(event!.t_client > oldest)) {
            storage.removeItem(name).catch(() => {})
          } else if (!delivered.has(id) && !queue.some((entry) => entry.event.event_id == id)) {
            queue.push({ event: event!, wire: texts[index]! })
          }
        })
      } catch {
        // The shop's storage cannot be read: nothing to take over.
      }
      if (queue.length) schedule(0)
    },

    /** Consent declined: nothing waits, and nothing of ours stays in the shop's storage. */
    async forget() {
      persist = false
      unkeep(queue)
      queue = []
      try {
        for (const name of await keptKeys()) await storage.removeItem(name)
      } catch {
        // Blocked storage holds nothing of ours to delete.
      }
    },

    /** Sends everything now; resolves once nothing waits or flies, or a request failed. */
    flush(): Promise<void> {
      const flushed = new Promise<void>((resolve) => idle.push(resolve))
      send()
      return flushed
    }
  }
}
