import { attempt } from '../../shared/attempt'
import { UID_COOKIE } from '../../shared/ids'
import { encode } from '../../shared/json'
import type { LineItem } from '../../shared/types'
import { whenLeaving } from './leaving'

/*
 * The cart as the data layer last showed it. SPEC's update-cart carries the whole cart, but
 * GA4's add_to_cart and remove_from_cart carry only the lines that changed; view_cart,
 * begin_checkout, add_shipping_info and add_payment_info carry the whole cart. So the whole
 * cart is learnt from those, and the changes are applied to it.
 *
 * It is kept in sessionStorage, so that an add on a product page changes the cart the cart page
 * showed earlier in the same tab: the catalogue ids, prices and quantities of its lines, nothing
 * about the shopper. Only while the tracker keeps its uid cookie, which it writes only with
 * consent and outside memory mode: the bridge stores nothing the tracker would not. Otherwise
 * the cart lives as long as the page. A cart changed in another tab is not seen here until this
 * tab shows the cart again.
 *
 * What is stored is the cart, or null for a cart known to be unknown (a whole cart that could
 * not be mapped): nothing stored means only that this page may know more than the storage, as
 * on a shopper's first page, where the bridge sees the cart before the tracker writes its cookie.
 */

const KEY = 'df_cart'

/** Whether the tracker keeps its ids in cookies now: consent granted, cookies allowed. */
const trackerStores = () => attempt(() => document.cookie.split(/;\s*/).some((pair) => pair.startsWith(UID_COOKIE + '='))) ?? false

const forgetStored = () => attempt(() => sessionStorage.removeItem(KEY))

/** Writes the cart, or null for an unknown one, into the tab's storage; false when the storage refused it (quota, blocked). */
const writeStored = (lines: LineItem[] | undefined) =>
  attempt(() => {
    sessionStorage.setItem(KEY, encode(lines ?? null))
    return true
  }) ?? false

export interface TabCart {
  /** The whole cart, if this tab has seen it. */
  known(): LineItem[] | undefined
  /**
   * Remembers the whole cart: from an event that carries it, or the cart an add or a removal
   * made. Undefined forgets it: the cart is unknown until the next event that carries it whole.
   */
  remember(lines: LineItem[] | undefined): void
  /** Consent withdrawn: nothing of the cart stays stored. */
  forgetStored(): void
}

/**
 * The cart of one bridge, until `signal` aborts. On a shopper's first page the bridge may see
 * the cart before the tracker has written its cookie: the cart is then stored at the next event
 * that needs it, or as the page is hidden or left, if the tracker keeps its ids by then, so that
 * the next page of the tab knows it.
 */
export function followTabCart(signal: AbortSignal): TabCart {
  // The cart of this page; it is what counts when the storage may not or cannot keep it.
  let memory: LineItem[] | undefined
  // False once the storage refused a write (quota, blocked): the page's memory serves from then on.
  let storageWrites = true

  whenLeaving(() => {
    if (memory && trackerStores()) writeStored(memory)
  }, signal)

  return {
    known() {
      if (!trackerStores()) forgetStored()
      else if (storageWrites) {
        try {
          // Another page of the tab may have changed it since.
          const text = sessionStorage.getItem(KEY)
          if (text == null) {
            // Nothing stored yet: the tracker has written its cookie since this page learnt the cart.
            if (memory) storageWrites = writeStored(memory)
          } else {
            const cart = JSON.parse(text)
            memory = Array.isArray(cart) ? cart : undefined
          }
        } catch {
          // Blocked or unreadable: the page's memory serves.
        }
      }
      return memory
    },
    remember(lines) {
      memory = lines
      if (!trackerStores()) {
        forgetStored()
        return
      }
      storageWrites = writeStored(lines)
      // Refused: the page's memory serves this page. An older stored cart must not serve the
      // next page: it is removed if the storage lets us.
      if (!storageWrites) forgetStored()
    },
    forgetStored
  }
}

/** The cart after adding (sign 1) or removing (sign -1) these lines; lines left with no unit go. */
export function changedCart(cart: LineItem[], changes: LineItem[], sign: 1 | -1): LineItem[] {
  const next = cart.map((line) => ({ ...line }))
  for (const change of changes) {
    const line = next.find((kept) => kept.item_id == change.item_id && kept.variant_item_id == change.variant_item_id)
    if (line) {
      line.quantity += sign * change.quantity
      // The price of the latest add is the line's price now.
      if (sign > 0) line.unit_price = change.unit_price
    } else if (sign > 0) next.push({ ...change })
  }
  return next.filter((line) => line.quantity > 0)
}
