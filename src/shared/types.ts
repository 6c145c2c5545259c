/**
 * What the tracker, the discovery client and the server sender all speak: SPEC's events and
 * user. Field names follow SPEC "Events" and "User object" to the letter, because they go on
 * the wire unchanged.
 */

/** SPEC's two ids of a product line, as the service's catalogue knows them: the product's and its variant's. */
export interface CatalogIds {
  /** The product's id, as in the shop's product feed. */
  item_id: string
  /** The id of the product's variant (size, colour) the shopper chose. */
  variant_item_id: string
}

/** One product line of a cart or an order (SPEC "Event kinds", purchase). */
export interface LineItem {
  /** Product id, as in your product feed. */
  item_id: string
  /** Variant id of that product. */
  variant_item_id: string
  /** Sale price of one unit, a finite number. */
  unit_price: number
  /** Units of this variant, a positive integer. */
  quantity: number
}

/** Properties of each event kind, keyed by the event name the wire carries. */
export interface EventProperties {
  /** A search suggestion in autocomplete was clicked. */
  'click-suggestion': {
    /** `meta.rid` of the autocomplete response that showed the suggestion. */
    rid: string
    suggestion: string
  }
  /** A product was clicked: search results, collections, recommendations or autocomplete. */
  'click-item': {
    /** `meta.rid` of the response that showed the item; leave out for items the service did not return. */
    rid?: string
    item_id: string
    variant_item_id: string
  }
  /** The page-redirect feature sent the shopper elsewhere. */
  redirect: {
    rid: string
    suggestion: string
  }
  /** The order is complete and its confirmation page was reached. */
  purchase: {
    order_id: string
    /** Currency code of every amount, e.g. `'EUR'`. */
    currency: string
    /** Order total. */
    revenue: number
    total_discount?: number
    total_tax?: number
    total_shipping?: number
    affiliation?: string
    line_items: LineItem[]
  }
  /** The cart changed, or the cart page was shown: the whole cart as it is now. */
  'update-cart': {
    line_items: LineItem[]
  }
  /** An add-to-cart button inside the service's widgets was used (never a product page's own button). */
  'add-to-cart': {
    item_id: string
    variant_item_id: string
    quantity: number
    rid: string
  }
  /** A new page was reached. Every field but the product ids is filled in from the page when left out. */
  'view-page': {
    /** Defaults to `location.href`. */
    url?: string
    /** Defaults to the previous page's URL (SPA) or `document.referrer`. */
    ref?: string
    /** Defaults to `innerWidth`. */
    width?: number
    /** Defaults to `innerHeight`. */
    height?: number
    /** Product pages only. */
    item_id?: string
    /** Product pages only. */
    variant_item_id?: string
  }
}

/** The seven event names of SPEC "Event kinds". */
export type EventName = keyof EventProperties

/** The shopper as SPEC "User object" describes it. */
export interface User {
  /** Permanent user id, at most 32 characters. */
  uid: string
  /** Session id, at most 32 characters; a new one after `sessionMinutes` without events. */
  sid: string
  /** Email of a logged-in shopper; lets the service recognise them across devices. */
  email?: string
  /** Shopper's IP address; the collector uses the request's address when it is left out. */
  ip?: string
  /** User agent; `navigator.userAgent` unless overridden. */
  ua?: string
  /** Language codes; `navigator.languages` unless overridden. */
  lang?: string[]
}

/** What the collector receives: SPEC "Generic event structure", one per event. */
export interface Envelope<E extends EventName = EventName> {
  /** The event's SPEC name, such as `'click-item'`. */
  event: E
  /** The event's properties, checked by SPEC's rules for that event. */
  properties: EventProperties[E]
  /** Merchant API key (SPEC "Authentication" 4). */
  key: string
  /** Epoch milliseconds when the event was tracked, not when it was sent. */
  t_client: number
  /** The shopper the event is about. */
  user: User
  /** Unique per event, so a collector can store a resent event once. */
  event_id: string
}

/** An event that could not be tracked or sent, with where the fault lies. */
export interface FeedbackError extends Error {
  /** Always `'FeedbackError'`, to tell the library's errors from others. */
  name: 'FeedbackError'
  /** The event (or command) the error is about. */
  event?: string
  /** The property path at fault, e.g. `line_items[0].quantity`. */
  field?: string
}

/** What became of one tracked event: what its sender returns, and what an add-on hears. */
export interface Outcome {
  /** The event's SPEC name. */
  event: EventName
  /** The properties as recorded; when refused, as they reached the rules. */
  properties: unknown
  /**
   * Why it was refused: the rules' error, or one that says it was dropped (`too large`,
   * `consent denied`, `dropped by an add-on`). Undefined when it was taken into the queue (a page's outbox).
   */
  error?: FeedbackError
}
