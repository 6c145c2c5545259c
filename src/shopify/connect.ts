import type { Checkout, Context, PixelEventsCheckoutCompleted, PixelEventsPageViewed } from '@shopify/web-pixels-extension'
import { envelope } from '../shared/envelope'
import { feedbackError } from '../shared/error'
import { createEventPath } from '../shared/event-path'
import type { EventName, FeedbackError } from '../shared/types'
import type { Consent } from '../browser/types'
import { collectedConsent, initialConsent } from './consent'
import { createPixelDelivery } from './delivery'
import { createMapping, isCheckoutPage, linesKey, viewPageOf } from './events'
import { createPixelFaults } from './faults'
import { createPixelIdentity } from './identity'
import type { PixelApi, ShopifyConnection, ShopifyOptions } from './types'

// The checkout's steps before the order: each carries the whole checkout, lines included.
const CHECKOUT_STEPS = [
  'checkout_started',
  'checkout_contact_info_submitted',
  'checkout_address_info_submitted',
  'checkout_shipping_info_submitted',
  'payment_info_submitted'
] as const

// Events tracked while consent is pending wait in memory, at most this many (a checkout has few).
const MAX_AWAITING_CONSENT = 100

/** The context and time of the Shopify event a SPEC event came from. */
interface ShopifyMoment {
  context: Context
  timestamp: string
}

/** An event that passed the rules, with the moment of the Shopify event it came from. */
interface Tracked extends ShopifyMoment {
  event: EventName
  properties: Record<string, unknown>
}

/** The options a pixel cannot work without, read once into a copy; the first fault found, if any. */
function readOptions(options: ShopifyOptions) {
  const settings = { ...options }
  for (const field of ['key', 'endpoint'] as const) {
    if (typeof settings[field] != 'string' || !settings[field])
      return { settings, broken: feedbackError('init', 'options.' + field, 'must be a non-empty string') }
  }
  // There is no shop page in the sandbox to resolve a relative URL against.
  if (!/^https?:\/\//.test(settings.endpoint)) return { settings, broken: feedbackError('init', 'options.endpoint', 'must be an absolute http(s) URL') }
  return { settings }
}

/** A pixel with options it cannot work with: the fault reported once, and nothing done. */
function idleConnection(faults: ReturnType<typeof createPixelFaults>, broken: FeedbackError): ShopifyConnection {
  faults.report(broken)
  return { flush: () => Promise.resolve(), stats: () => ({ queued: 0, sent: 0, retried: 0, dropped: { ...faults.dropped } }) }
}

/** The pixel's delivery through the Standard API's storage, its drops reported by name. */
function deliveryOf(api: PixelApi, settings: ShopifyOptions, faults: ReturnType<typeof createPixelFaults>) {
  return createPixelDelivery(settings, settings.flushInterval ?? 1000, api.browser.localStorage, (entries, reason, why) =>
    faults.drop(entries.length, reason, entries[0].event.event, why || 'too large for a request')
  )
}

/**
 * Connects a Shopify Web Pixel to the collector: call it with the Standard API, in an app
 * pixel's `register` callback or in a custom pixel's code (docs/guide/shopify.md). It follows
 * Shopify's standard events and sends SPEC's (events.ts), under the storefront's shopper read
 * through `browser.cookie` (identity.ts), with the consent Shopify's customer privacy gives
 * (consent.ts), by fetch with keepalive (delivery.ts). Nothing here touches `document.cookie`
 * or `localStorage`: in a sandbox they are not the shop's. Nothing throws into Shopify's code;
 * every fault goes to `onError` and the console (faults.ts).
 * @param api - The Standard API: what `register` hands an app pixel, or `api` in a custom pixel.
 * @param options - The key, the collector's URL, and the pixel's other settings.
 */
export function connectShopify(api: PixelApi, options: ShopifyOptions): ShopifyConnection {
  const faults = createPixelFaults(options)
  const { settings, broken } = readOptions(options)
  if (broken) return idleConnection(faults, broken)

  const identity = createPixelIdentity(api.browser.cookie, settings, api.init.context.document.location)
  const delivery = deliveryOf(api, settings, faults)
  const mapping = createMapping(settings.itemIds)
  let consent: Consent = initialConsent(api, settings)
  const blocked = consent == 'denied' // Only the browser's opt-out denies from the start, and no banner overrides it.
  let awaitingConsent: Tracked[] = []

  // Cookie reads and writes are asynchronous: events take their turn through them one at a
  // time, in the order Shopify published them.
  let turn = Promise.resolve()
  const inTurn = (work: () => Promise<void>) => {
    turn = turn.then(work).catch(faults.invalid)
  }

  /** The shopper's ids, then the envelope, then delivery. */
  const deliver = ({ event, properties, context, timestamp }: Tracked) =>
    inTurn(async () => {
      const { uid, sid } = await identity.user()
      const user = { uid, sid, ua: context.navigator.userAgent, lang: [...context.navigator.languages] }
      // t_client is when the shopper did it, as Shopify stamped it, not when the cookies answered.
      const made = envelope(event, properties, settings.key, user)
      delivery.add({ event: { ...made, t_client: Date.parse(timestamp) || made.t_client } })
    })

  /**
   * The way every event takes (shared/event-path.ts): the rules, then, by consent, delivery or
   * the wait for consent. Throws a FeedbackError naming the event, the field and the rule.
   */
  const takeEvent = createEventPath<ShopifyMoment>({
    queue(event, properties, { context, timestamp }) {
      const tracked = { event, properties, context, timestamp }
      if (settings.debug) console.log('discovery-feedback:', event, properties)
      if (consent == 'granted') deliver(tracked)
      else if (consent == 'pending') {
        if (awaitingConsent.length < MAX_AWAITING_CONSENT) awaitingConsent.push(tracked)
        else faults.drop(1, 'overflow', event, 'more than ' + MAX_AWAITING_CONSENT + ' events waited for consent')
      }
      return undefined
    },
    failed: faults.invalid
  })
  const track = (event: EventName, input: unknown, context: Context, timestamp: string) => takeEvent(event, input, { context, timestamp })

  const setConsent = (next: Consent) => {
    if (next == consent || blocked) return
    consent = next
    if (next == 'granted') {
      awaitingConsent.splice(0).forEach(deliver)
      delivery.adopt()
    } else {
      // Declined: nothing waits or is sent, and our ids and kept events are deleted, the ids
      // first, so a storage that fails cannot keep them.
      awaitingConsent = []
      inTurn(async () => {
        await identity.forget()
        await delivery.forget()
      })
    }
  }

  /** Runs a subscriber's work: whatever Shopify's data or our rules throw is reported, never thrown back. */
  const guarded =
    <T>(work: (event: T) => void) =>
    (event: T) => {
      try {
        work(event)
      } catch (error) {
        faults.invalid(error)
      }
    }

  api.customerPrivacy?.subscribe(
    'visitorConsentCollected',
    guarded((payload) => setConsent(collectedConsent(payload)))
  )

  // The page viewed before, for the next view's ref, as the storefront tracker keeps it.
  let lastUrl: string | undefined
  api.analytics.subscribe(
    'page_viewed',
    guarded((event: PixelEventsPageViewed) => {
      if (settings.pages != 'all' && !isCheckoutPage(event.context.document.location.pathname)) return
      track('view-page', viewPageOf(event.context, lastUrl ?? event.context.document.referrer), event.context, event.timestamp)
      lastUrl = event.context.document.location.href
    })
  )

  // A change of the cart inside the checkout (a line removed, a gift added) is an update-cart
  // with the checkout's lines; the lines it started with are the cart the storefront sent.
  let checkoutLines: string | undefined
  for (const step of CHECKOUT_STEPS) {
    api.analytics.subscribe(
      step,
      guarded((event: { data: { checkout: Checkout }; context: Context; timestamp: string }) => {
        const lines = event.data.checkout.lineItems
        const now = linesKey(lines)
        const changed = checkoutLines != undefined && now != checkoutLines
        checkoutLines = now
        if (!changed) return
        const items = mapping.lineItemsOf(step, lines, faults.invalid)
        // A cart none of whose lines could be mapped is not an empty cart: nothing is said of it.
        if (items.length || !lines.length) track('update-cart', { line_items: items }, event.context, event.timestamp)
      })
    )
  }

  api.analytics.subscribe(
    'checkout_completed',
    guarded((event: PixelEventsCheckoutCompleted) => track('purchase', mapping.purchaseOf(event.data.checkout, faults.invalid), event.context, event.timestamp))
  )

  // Events the shopper's earlier pages left unsent, once storage may be used. Not in the
  // events' turn: reading them back must not hold up this page's purchase.
  if (consent == 'granted') delivery.adopt()

  return {
    flush: () => turn.then(() => delivery.flush()),
    stats: () => ({ queued: awaitingConsent.length + delivery.queued, ...delivery.stats(), dropped: { ...faults.dropped } })
  }
}
