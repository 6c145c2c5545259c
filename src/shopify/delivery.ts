import type { BrowserLocalStorage } from '@shopify/web-pixels-extension'
import { jsonOf, MAX_BODY, pack, type Body } from '../shared/batch'
import { createEngine, type Queued } from '../shared/engine'
import { withSendTime } from '../shared/http'
import { KEEPALIVE_BUDGET } from '../shared/keepalive'
import { createMemoryStore } from '../shared/memory-store'
import { fnv1a64 } from '../shared/order-event-id'
import { post } from '../shared/post'
import type { Envelope } from '../shared/types'

// Requests in flight: a checkout tracks a handful of events, and every request is a keepalive
// one, which together may hold 64 KiB at most (shared/keepalive.ts).
const MAX_IN_FLIGHT = 2
// Kept events older than this are not sent any more (the storefront outbox's bound too).
const MAX_AGE = 7 * 864e5
const MAX_KEPT = 200

export type PixelEntry = Queued & { event: Envelope }

/** A request of the pixel, and the keepalive bytes it holds: all of its body's. */
type PixelRequest = Body<PixelEntry> & { held: number }

/**
 * Sends a pixel's events through the engine every sender runs (shared/engine.ts): by fetch with
 * keepalive (sendBeacon is deprecated in pixels), a purchase at once and anything else after
 * `interval`, at most two requests in flight and, together, 64 KiB of keepalive bodies.
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
  drop: (entries: PixelEntry[], reason: 'rejected' | 'too_large', detail?: string) => void
) {
  // Kept events of this key and collector only: a staging and a production pixel on one shop
  // never take each other's.
  const prefix = 'df_pixel_' + fnv1a64(key + ' ' + endpoint).toString(36) + '_'
  // Ids this page delivered: a kept copy read back after that is not sent again.
  const delivered = new Set<string>()
  let persist = false

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

  // The engine's store: the queue in memory, each removal deleted from the shop's storage too.
  const queue = createMemoryStore(unkeep)

  const engine = createEngine<PixelEntry, PixelRequest>(queue, {
    take(waiting, most, oversized) {
      const requests: PixelRequest[] = []
      let held = engine.keepaliveInUse()
      for (const body of pack(waiting, MAX_BODY, oversized, most)) {
        held += body.bytes
        // Over the keepalive budget: this body waits for an answer to free some.
        if (held > KEEPALIVE_BUDGET) break
        requests.push({ ...body, held: body.bytes })
      }
      return requests
    },
    post: (request) => post(withSendTime(endpoint), request.body, true),
    answered(request, _answer, outcome) {
      if (outcome == 'delivered') request.entries.forEach((entry) => delivered.add(entry.event.event_id))
    },
    most: MAX_IN_FLIGHT,
    interval,
    // A purchase leaves at once.
    due: (entry) => (entry.event.event == 'purchase' ? 0 : undefined),
    // A refusal says why in the collector's own words, where its answer gave them.
    drop: (entries, reason, detail, said) => drop(entries, reason, said ? detail + ': ' + said : detail)
  })

  return {
    get queued() {
      return queue.entries.length
    },

    /** Queues an event: a purchase leaves at once, anything else within `interval`. */
    add(entry: PixelEntry) {
      queue.add(entry)
      keep(entry)
      engine.queued()
    },

    /**
     * Consent allows storage: events queued so far are written, and those that earlier pages
     * left unsent are taken over and sent. Another open tab may take the same ones: the
     * collector stores each event id once.
     */
    async adopt() {
      persist = true
      queue.entries.forEach(keep)
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
          } else if (!delivered.has(id) && !queue.entries.some((entry) => entry.event.event_id == id)) {
            queue.add({ event: event!, wire: texts[index]! })
          }
        })
      } catch {
        // The shop's storage cannot be read: nothing to take over.
      }
      engine.send()
    },

    /** Consent declined: nothing waits, and nothing of ours stays in the shop's storage. */
    async forget() {
      persist = false
      unkeep(queue.clear())
      try {
        for (const name of await keptKeys()) await storage.removeItem(name)
      } catch {
        // Blocked storage holds nothing of ours to delete.
      }
    },

    /** Sends everything now; resolves once nothing waits or flies, or a request failed. */
    flush: engine.flush,
    /** Events sent and retried so far. */
    stats: engine.stats
  }
}
