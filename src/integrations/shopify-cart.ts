import type { Addon, Consent } from '../browser/types'
import type { User } from '../shared/types'

/*
 * The storefront's half of the Shopify order webhook (docs/guide/order-webhooks.md): the shopper's
 * uid and sid written into the cart as the attributes `_df_uid` and `_df_sid`, through Shopify's
 * AJAX Cart API (POST /cart/update.js with `attributes`). Shopify copies a cart's attributes into
 * the order it becomes (the order's note_attributes), so the webhook's purchase names the shopper
 * whose pages reported the order, and the relay keeps it once with the pixel's. An attribute whose
 * name starts with an underscore is not shown to the shopper at checkout.
 */

/** What the writer needs of a tracker: its shopper, and its add-ons. */
export interface CartTarget {
  /** The shopper's uid and sid, as the tracker reads them now. */
  readonly user: User
  /**
   * Plugs in the writer's add-on, which hears every view and consent; returns its removal.
   * @param addon - The cart writer's add-on.
   */
  use(addon: Addon): () => void
}

/** Options of `shopifyCartIds`. */
export interface ShopifyCartOptions {
  /**
   * Where the storefront's AJAX Cart API lives: the theme's `window.Shopify.routes.root`
   * ('/fr/' on a market of its own), else '/'.
   */
  root?: string
  /** Hears a cart request that failed; without it, the console does. */
  onError?: (error: Error) => void
}

type ShopifyWindow = { Shopify?: { routes?: { root?: unknown } } }

/** The attributes the writer keeps in the cart. */
export const CART_ATTRIBUTES = { uid: '_df_uid', sid: '_df_sid' } as const

/**
 * Keeps the tracker's uid and sid in the Shopify cart: checked (GET cart.js) once a page, and at
 * a later view-page of the page when the ids changed, and written (POST cart/update.js) only
 * when the cart holds others: a new cart after an order, a new session. Nothing is read or
 * written while the shopper's consent is not granted. Returns the function that removes it.
 * @param tracker - The tracker, or the script tag's `discoveryFeedback.tracker`.
 * @param options - Where the storefront's Cart API lives, and where faults go.
 */
export function shopifyCartIds(tracker: CartTarget, options: ShopifyCartOptions = {}): () => void {
  const given = (window as ShopifyWindow).Shopify?.routes?.root
  const root = options.root ?? (typeof given == 'string' && given.startsWith('/') ? given : '/')
  const report = (error: unknown) => {
    const failure = new Error('discovery-feedback: shopifyCartIds: the cart could not be ' + (error instanceof Error ? error.message : String(error)))
    if (options.onError) options.onError(failure)
    else console.warn(failure.message)
  }
  let consent: Consent | undefined
  let syncing = false
  let again = false
  // The ids this page saw in the cart, or wrote there: the page's later view-pages (a single-page
  // app's) check again only once the tracker's ids changed.
  let confirmed = ''

  /** Writes the ids into the cart if it holds others; one request chain at a time, once more if asked meanwhile. */
  async function sync() {
    const { uid, sid } = tracker.user
    if (confirmed == uid + ' ' + sid) return
    if (syncing) return void (again = true)
    syncing = true
    try {
      const cart = await fetch(root + 'cart.js', { credentials: 'same-origin', headers: { accept: 'application/json' } })
      if (!cart.ok) throw new Error('read: cart.js answered ' + cart.status)
      const attributes = ((await cart.json()) as { attributes?: Record<string, unknown> }).attributes || {}
      if (attributes[CART_ATTRIBUTES.uid] != uid || attributes[CART_ATTRIBUTES.sid] != sid) {
        // Consent may have been withdrawn while the cart was read.
        if (consent != 'granted') return
        const written = await fetch(root + 'cart/update.js', {
          method: 'POST',
          credentials: 'same-origin',
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify({ attributes: { [CART_ATTRIBUTES.uid]: uid, [CART_ATTRIBUTES.sid]: sid } })
        })
        if (!written.ok) throw new Error('written: cart/update.js answered ' + written.status)
      }
      confirmed = uid + ' ' + sid
    } catch (error) {
      report(error)
    } finally {
      syncing = false
      if (again) {
        again = false
        soon()
      }
    }
  }

  /**
   * Syncs once the current task is done: a page's queued calls are replayed right after the
   * add-ons they queued with (docs/guide/extending.md), so a `consent('denied')` queued before
   * the tracker loaded is known before the cart is touched.
   */
  const soon = () =>
    queueMicrotask(() => {
      if (consent == 'granted') void sync()
    })

  return tracker.use({
    consent(state) {
      const granted = state == 'granted' && consent != 'granted'
      consent = state
      if (granted) soon()
    },
    view: soon
  })
}
