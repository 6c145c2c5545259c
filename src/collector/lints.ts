// This module finds the lints: what an integration most likely got wrong, judged one event at a
// time. They are pure functions of the event and of what its session showed before, and
// activity.ts keeps that state. docs/guide/inspector.md lists them with
// their thresholds.
import { clip } from './messages'
import type { CollectorMessage, Lint, StoredEvent } from './types'

/** An add-to-cart's click-item counts when their t_client are at most this far apart. */
const CLICK_WINDOW_MS = 60000
/** A t_sent (or, without one, a t_client) this far from the receive time is clock skew. */
const SKEW_MS = 60000
/** Revenue may differ from its line items by rounding: up to 1 % of them, and at least 0.05. */
const REVENUE_SHARE = 0.01
const REVENUE_MIN = 0.05
/** A view-page whose URL matches this is a product page's (docs/guide/inspector.md; `--product-pattern`). */
export const PRODUCT_URL = /\/products?\//

// SPEC "Response meta object": a rid is a one-letter prefix, a hyphen, then a UUID-shaped value.
const RID_SHAPE = /^[a-z]-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
// SPEC "Event kinds": these events echo the meta.rid of a preceding response.
const ECHO_RID = new Set(['click-item', 'click-suggestion', 'add-to-cart', 'redirect'])

const money = (amount: number) => (Math.round(amount * 100) / 100).toFixed(2)
const duration = (ms: number) => {
  const seconds = Math.round(Math.abs(ms) / 1000)
  return seconds < 120 ? seconds + ' s' : seconds < 7200 ? Math.round(seconds / 60) + ' min' : Math.round(seconds / 3600) + ' h'
}

/** A click-item the session showed before: what an add-to-cart's click must match. */
export interface SeenClick {
  item_id: string
  t_client: number
}

/** What a lint knows beyond the event: see `lint`. */
export interface LintContext {
  session: string | null
  clicks: SeenClick[]
  returnedTo: ((rid: string) => string | undefined) | null
  productUrl: RegExp
}

type Found = [code: string, text: string] | undefined

/**
 * Applies the rid rule. `session` is the uid+sid key of the event; `returnedTo(rid)` names the session
 * a response of this server returned the rid to: '' when its request named no user, undefined
 * when it never returned it. Without `returnedTo` (the collector alone, which sees no discovery
 * responses) only the rid's shape can be checked.
 */
function ridLint(envelope: StoredEvent, session: string | null, returnedTo: LintContext['returnedTo']): Found {
  const rid = (envelope.properties as { rid?: unknown }).rid
  if (!ECHO_RID.has(envelope.event) || typeof rid != 'string') return
  if (!returnedTo) {
    if (!RID_SHAPE.test(rid)) return ['rid-shape', `rid ${clip(rid)} is not shaped like a response's meta.rid (a letter, a hyphen, a UUID)`]
    return
  }
  const owner = returnedTo(rid)
  if (owner == null) return ['rid-unknown', `rid ${clip(rid)} never returned by a discovery response seen here`]
  // The discovery routes answer only a request with the user's uid and sid (SPEC "Endpoints"), so
  // every rid they returned belongs to one session.
  if (owner != session) return ['rid-session', `rid ${clip(rid)} was returned to another session, not this one`]
}

/** An add-to-cart must come with its click-item (SPEC "Event kinds"); `clicks` are the session's earlier click-items. */
function cartLint(envelope: StoredEvent, clicks: SeenClick[]): Found {
  if (envelope.event != 'add-to-cart') return
  const { properties, t_client } = envelope
  const item = clip(properties.item_id, 200)
  if (clicks.some((click) => click.item_id == item && Math.abs(click.t_client - t_client) <= CLICK_WINDOW_MS)) return
  return ['cart-without-click', `add-to-cart of item ${clip(properties.item_id)} without a click-item on it in this session within ${CLICK_WINDOW_MS / 1000} s`]
}

/**
 * SPEC "Event kinds": revenue is the total. SPEC does not say whether unit prices include tax
 * (European shops' do, the demo store's too), so both sums pass: line items + shipping −
 * discount, with or without total_tax added.
 */
function revenueLint(envelope: StoredEvent): Found {
  if (envelope.event != 'purchase') return
  const properties = envelope.properties
  const items = properties.line_items.reduce((sum, line) => sum + line.unit_price * line.quantity, 0)
  const shipping = properties.total_shipping || 0
  const discount = properties.total_discount || 0
  const tax = properties.total_tax || 0
  const included = items + shipping - discount
  const close = (expected: number) => Math.abs(properties.revenue - expected) <= Math.max(REVENUE_MIN, REVENUE_SHARE * Math.abs(expected))
  if (close(included) || close(included + tax)) return
  return [
    'revenue',
    `revenue ${money(properties.revenue)} is far from line items ${money(items)} + shipping ${money(shipping)} − discount ${money(discount)} = ${money(included)}` +
      (tax ? ` (${money(included + tax)} with tax added)` : '')
  ]
}

/** SPEC "Event kinds": on a product page, view-page carries item_id. */
function productViewLint(envelope: StoredEvent, productUrl: RegExp): Found {
  if (envelope.event != 'view-page') return
  const properties = envelope.properties
  if (properties.item_id != null || typeof properties.url != 'string') return
  // The rule reads the path only, so that a query such as ?next=/products/x does not count, and
  // clips it, so that the operator's own pattern never runs over a long text.
  let path = properties.url
  try {
    path = new URL(path).pathname
  } catch {
    // Not an absolute URL: judged as written.
  }
  if (productUrl.test(path.slice(0, 2048))) return ['product-view', `view-page of ${clip(properties.url, 80)} looks like a product page but has no item_id`]
}

/**
 * Finds clock skew. The library sends ?t_sent= (docs/reference/wire-format.md): its gap to the receive time is
 * the device clock's error, whereas t_client may be old for an event sent on a later visit.
 * Without t_sent, t_client is all there is.
 */
function skewLint({ t_client }: StoredEvent, receivedAt: number, sentAt: number | null): Found {
  if (sentAt != null) {
    const off = sentAt - receivedAt
    if (Math.abs(off) > SKEW_MS) return ['clock-skew', `the device clock is ${duration(off)} ${off > 0 ? 'ahead' : 'behind'} (t_sent against the receive time)`]
    return
  }
  const off = t_client - receivedAt
  if (Math.abs(off) > SKEW_MS) {
    return [
      'clock-skew',
      `t_client is ${duration(off)} ${off > 0 ? 'after' : 'before'} the receive time and no t_sent came to tell a wrong clock from a late send`
    ]
  }
}

/**
 * Returns the lints of one collector message. `context` holds: `session` (its uid+sid key),
 * `clicks` (the session's earlier click-items), `returnedTo` (see ridLint) and `productUrl`. An
 * accepted message carries the receive time (`envelope.received_at`) and its request's
 * `t_sent`, null when it had none.
 */
export function lint(message: CollectorMessage, context: LintContext): Lint[] {
  if (message.type == 'rejected') return [{ code: 'rejected', text: message.error }]
  // The first copy was judged already, so a second copy only repeats its lints.
  if (message.type == 'duplicate')
    return [{ code: 'duplicate', text: `event_id ${clip(message.envelope.event_id)} was stored before: the same event arrived twice` }]
  const envelope = message.envelope
  const found = [
    ridLint(envelope, context.session, context.returnedTo),
    cartLint(envelope, context.clicks),
    revenueLint(envelope),
    productViewLint(envelope, context.productUrl),
    skewLint(envelope, envelope.received_at, message.t_sent)
  ]
  return found.filter((lint): lint is [string, string] => lint != null).map(([code, text]) => ({ code, text }))
}
