import type { BrowserLocalStorage } from '@shopify/web-pixels-extension'
import { jsonOf, pack, type Packed } from '../shared/batch'
import { createBackoff, outcomeOf, withSendTime } from '../shared/http'
import { post } from '../shared/post'

// Two requests at a time, each at most 30 KiB, so both fit the browser's 64 KiB of keepalive
// requests in flight (Fetch standard, "keepalive"). A checkout tracks a handful of events.
const MAX_IN_FLIGHT = 2
const MAX_BODY = 30720
// Events kept in the shop's storage for a later page: each under its own key, so that two
// pages (two tabs) writing at once never overwrite each other's.
const PREFIX = 'df_pixel_'
const MAX_AGE = 7 * 864e5
const MAX_KEPT = 200

export type PixelEntry = Packed & { sending?: boolean }

export interface PixelCounts {
  sent: number
  retried: number
}

/**
 * Sends a pixel's events: by fetch with keepalive (sendBeacon is deprecated in pixels, and the
 * sandbox's own beacon would go through the top frame), a purchase at once and anything else
 * after `interval`, retried under the HTTP policy both other senders follow (shared/http.ts).
 *
 * The sandbox has no storage of the shop's except the Standard API's asynchronous
 * `browser.localStorage`: each event is written there as it is queued and removed once the
 * collector stored it, so an event whose request the closing page cut short is sent by the
 * pixel on the shopper's next page. Its event id lets the collector store it once.
 */
export function createPixelDelivery(
  endpoint: string,
  interval: number,
  storage: BrowserLocalStorage,
  counts: PixelCounts,
  refused: (entries: PixelEntry[], reason: 'rejected' | 'too_large', detail: string) => void
) {
  const backoff = createBackoff({ probeFirst: false })
  let queue: PixelEntry[] = []
  let inFlight = 0
  let timer: ReturnType<typeof setTimeout> | undefined
  let due = Infinity
  let persist = false
  const idle: (() => void)[] = []

  // Storage is the top frame's, a message away: a failure there (full, blocked) leaves the
  // event in memory only, and is no reason to stop sending.
  const keep = (entry: PixelEntry) => persist && storage.setItem(PREFIX + entry.event.event_id, jsonOf(entry)).catch(() => {})
  const unkeep = (entries: PixelEntry[]) => entries.forEach((entry) => storage.removeItem(PREFIX + entry.event.event_id).catch(() => {}))

  const settled = () => {
    if (!queue.length && !inFlight) idle.splice(0).forEach((resolve) => resolve())
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

  /** Sends what waits, as many bodies as the collector's health allows. */
  function send() {
    clearTimeout(timer)
    due = Infinity
    if (Date.now() < backoff.resumeAt()) {
      // Backing off after a failure: a flush() ends here, and the backoff's timer sends later.
      idle.splice(0).forEach((resolve) => resolve())
      return schedule(backoff.resumeAt())
    }
    const waiting = queue.filter((entry) => !entry.sending)
    const tooLarge = (entry: PixelEntry) => {
      without([entry])
      refused([entry], 'too_large', 'too large for a request')
    }
    const bodies = pack(waiting, MAX_BODY, tooLarge, backoff.slots(MAX_IN_FLIGHT) - inFlight)
    for (const { body, entries } of bodies) {
      inFlight++
      entries.forEach((entry) => (entry.sending = true))
      const step = backoff.step()
      post(withSendTime(endpoint, Date.now()), body, true).then((answer) => {
        inFlight--
        entries.forEach((entry) => (entry.sending = false))
        const outcome = outcomeOf(answer.status)
        if (outcome == 'retry') {
          counts.retried += entries.length
          backoff.failed(step, answer.retryAfter)
        } else {
          backoff.answered()
          without(entries)
          if (outcome == 'delivered') counts.sent += entries.length
          else refused(entries, 'rejected', 'the collector answered ' + answer.status)
        }
        if (queue.some((entry) => !entry.sending)) schedule(outcome == 'retry' ? backoff.resumeAt() : 0)
        // A failed request leaves its events waiting out the backoff: a flush() ends here too.
        if (outcome == 'retry') idle.splice(0).forEach((resolve) => resolve())
        settled()
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
     * left unsent are taken over and sent. Another tab may take the same ones: the collector
     * stores each event id once.
     */
    async adopt() {
      persist = true
      queue.forEach(keep)
      const count = await storage.length()
      const keys = await Promise.all(Array.from({ length: count }, (_, index) => storage.key(index)))
      const ours = keys.filter((key): key is string => !!key && key.startsWith(PREFIX)).slice(0, MAX_KEPT)
      const oldest = Date.now() - MAX_AGE
      for (const key of ours) {
        const wire = await storage.getItem(key)
        let event
        try {
          event = JSON.parse(wire!)
        } catch {
          // Cut short, or written by someone else.
        }
        if (!event?.event_id || !(event.t_client > oldest)) storage.removeItem(key)
        else if (!queue.some((entry) => entry.event.event_id == event.event_id)) queue.push({ event, wire: wire! })
      }
      if (queue.length) schedule(0)
    },

    /** Consent declined: nothing waits, and nothing of ours stays in the shop's storage. */
    async forget() {
      persist = false
      unkeep(queue)
      queue = []
      const count = await storage.length()
      const keys = await Promise.all(Array.from({ length: count }, (_, index) => storage.key(index)))
      for (const key of keys) if (key?.startsWith(PREFIX)) await storage.removeItem(key)
    },

    /** Sends everything now; resolves once nothing waits or flies, or a request failed. */
    flush(): Promise<void> {
      const flushed = new Promise<void>((resolve) => idle.push(resolve))
      send()
      return flushed
    }
  }
}
