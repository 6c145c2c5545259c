import type { Checkout, Context, PixelEventsCheckoutCompleted, PixelEventsPageViewed } from '@shopify/web-pixels-extension'
import { envelope } from '../shared/envelope'
import { feedbackError } from '../shared/error'
import { validate } from '../shared/rules'
import type { EventName, FeedbackError } from '../shared/types'
import type { Consent } from '../browser/types'
import { createPixelDelivery, type PixelEntry } from './delivery'
import { createMapping, isCheckoutPage, linesKey, viewPageOf } from './events'
import { createPixelIdentity } from './identity'
import type { PixelApi, ShopifyConnection, ShopifyOptions, ShopifyStats } from './types'

// The checkout's steps before the order: each carries the whole checkout, lines included.
const CHECKOUT_STEPS = [
  'checkout_started',
  'checkout_contact_info_submitted',
  'checkout_address_info_submitted',
  'checkout_shipping_info_submitted',
  'payment_info_submitted'
] as const

// Events tracked while consent is pending wait in memory, at most this many (a checkout has few).
const MAX_WAITING = 100

/** An event that passed the rules, with the Shopify event it came from. */
interface Tracked {
  event: EventName
  properties: Record<string, unknown>
  context: Context
  timestamp: string
}

/**
 * Connects a Shopify Web Pixel to the collector: call it with the Standard API, in an app
 * pixel's `register` callback or in a custom pixel's code (README "Shopify"). It follows
 * Shopify's standard events and sends SPEC's (events.ts), under the storefront's shopper read
 * through `browser.cookie` (identity.ts), with the consent Shopify's customer privacy gives,
 * by fetch with keepalive (delivery.ts). Nothing here touches `document.cookie` or
 * `localStorage`: in a sandbox they are not the shop's. Nothing throws into Shopify's code;
 * every fault goes to `onError` and the console.
 */
export function connectShopify(api: PixelApi, options: ShopifyOptions): ShopifyConnection {
  const dropped: ShopifyStats['dropped'] = { invalid: 0, rejected: 0, too_large: 0 }
  const counts = { sent: 0, retried: 0 }
  const report = (error: FeedbackError) => {
    // Neither a console nor a handler that throws may turn one fault into two.
    try {
      console.error(error.message)
      options.onError?.(error)
    } catch {
      // Nothing more to do with it.
    }
  }
  const invalid = (error: unknown) => {
    dropped.invalid++
    report((error as FeedbackError).name == 'FeedbackError' ? (error as FeedbackError) : feedbackError(undefined, undefined, 'failed: ' + error))
  }

  let broken: FeedbackError | undefined
  try {
    for (const field of ['key', 'endpoint'] as const) {
      if (typeof options[field] != 'string' || !options[field]) throw feedbackError('init', 'options.' + field, 'must be a non-empty string')
    }
    // new URL throws on a relative URL: there is no page in the sandbox to resolve it against.
    new URL(options.endpoint)
  } catch (error) {
    broken = (error as FeedbackError).name == 'FeedbackError' ? (error as FeedbackError) : feedbackError('init', 'options.endpoint', 'must be an absolute URL')
  }
  if (broken) {
    // Options it cannot work with: reported once, and the pixel does nothing.
    report(broken)
    return { flush: () => Promise.resolve(), stats: () => ({ queued: 0, ...counts, dropped }) }
  }

  const { key, endpoint } = options
  const location = api.init.context.document.location
  const identity = createPixelIdentity(api.browser.cookie, options, location)
  const delivery = createPixelDelivery(endpoint, options.flushInterval ?? 1000, api.browser.localStorage, counts, (entries, reason, detail) => {
    dropped[reason] += entries.length
    report(feedbackError(entries.length == 1 ? entries[0].event.event : undefined, undefined, entries.length + ' dropped: ' + detail))
  })
  const mapping = createMapping(options.itemIds)

  // Consent, as on the storefront (browser/consent.ts): Global Privacy Control opts out; else
  // Shopify's customer privacy decides. Analytics not (yet) allowed is 'pending', since the
  // visitor may still say yes on this page; a 'visitorConsentCollected' settles it.
  const gpc = (globalThis.navigator as (Navigator & { globalPrivacyControl?: boolean }) | undefined)?.globalPrivacyControl
  const optedOut = !!gpc && !options.ignoreGlobalPrivacyControl
  const allowed = api.init.customerPrivacy?.analyticsProcessingAllowed ?? true
  let consent: Consent = optedOut ? 'denied' : allowed ? 'granted' : 'pending'
  let waiting: Tracked[] = []

  // Cookie reads and writes are asynchronous: events go through them one at a time, in the
  // order Shopify published them.
  let line = Promise.resolve()
  const inTurn = (work: () => Promise<void>) => {
    line = line.then(work).catch(invalid)
  }

  const send = ({ event, properties, context, timestamp }: Tracked) =>
    inTurn(async () => {
      const { uid, sid } = await identity.user()
      const user = { uid, sid, ua: context.navigator.userAgent, lang: [...context.navigator.languages] }
      // t_client is when the shopper did it, as Shopify stamped it, not when the cookies answered.
      const entry: PixelEntry = { event: { ...envelope(event, properties, key, user), t_client: Date.parse(timestamp) || Date.now() } }
      if (options.debug) console.log('discovery-feedback:', event, properties)
      delivery.add(entry, event == 'purchase')
    })

  /** The way of every event: the rules, then consent, then the shopper's ids and delivery. */
  const track = (event: EventName, input: unknown, context: Context, timestamp: string) => {
    const tracked = { event, properties: validate(event, input), context, timestamp }
    if (consent == 'granted') send(tracked)
    else if (consent == 'pending' && waiting.length < MAX_WAITING) waiting.push(tracked)
  }

  const setConsent = (next: Consent) => {
    if (optedOut || next == consent) return
    consent = next
    if (next == 'granted') {
      waiting.splice(0).forEach(send)
      inTurn(() => delivery.adopt())
    } else {
      // Declined: nothing waits, nothing is sent, and our ids and stored events are deleted.
      waiting = []
      inTurn(async () => {
        await delivery.forget()
        await identity.forget()
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
        invalid(error)
      }
    }

  api.customerPrivacy?.subscribe(
    'visitorConsentCollected',
    guarded(({ customerPrivacy }) => setConsent(customerPrivacy.analyticsProcessingAllowed ? 'granted' : 'denied'))
  )

  api.analytics.subscribe(
    'page_viewed',
    guarded((event: PixelEventsPageViewed) => {
      if (options.pages == 'all' || isCheckoutPage(event.context.document.location.pathname))
        track('view-page', viewPageOf(event.context), event.context, event.timestamp)
    })
  )

  // A change of the cart inside the checkout (a line removed, a gift added) is an update-cart
  // with the checkout's lines; the lines it started with are the cart the storefront sent.
  let lines: string | undefined
  for (const step of CHECKOUT_STEPS) {
    api.analytics.subscribe(
      step,
      guarded((event: { data: { checkout: Checkout }; context: Context; timestamp: string }) => {
        const now = linesKey(event.data.checkout.lineItems)
        if (lines != undefined && now != lines) {
          track('update-cart', { line_items: mapping.lineItemsOf(step, event.data.checkout.lineItems, invalid) }, event.context, event.timestamp)
        }
        lines = now
      })
    )
  }

  api.analytics.subscribe(
    'checkout_completed',
    guarded((event: PixelEventsCheckoutCompleted) => track('purchase', mapping.purchaseOf(event.data.checkout, invalid), event.context, event.timestamp))
  )

  if (consent == 'granted') inTurn(() => delivery.adopt())

  return {
    flush: () => line.then(() => delivery.flush()),
    stats: () => ({ queued: waiting.length + delivery.queued, ...counts, dropped: { ...dropped } })
  }
}
