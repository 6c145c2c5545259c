// This module keeps what the inspector knows beyond single events: per session, the funnel and
// the click-items an add-to-cart needs, and per rid, the session a discovery response returned it
// to. Every collector message passes through here once and leaves with its lints (demo/lints.mjs).
// All of it is bounded, whatever clients send: sessions, rids and clicks beyond the limits push
// out the oldest.
import { clip, lint, PRODUCT_URL } from './lints.mjs'

const RECENT = 100
const CLICKS_PER_SESSION = 20
// The inspector draws the sessions active last, since a handful reads at a glance.
const SESSIONS_SHOWN = 8
// The inspector's charts are sent again at most this often while events and responses arrive.
const STATS_EVERY_MS = 250

// SPEC "Response meta object": the rid's one-letter prefix names the route family.
const FAMILIES = { a: 'autocomplete', s: 'search', c: 'collection', r: 'recommendation' }
const familyOf = (rid) => (typeof rid == 'string' && rid[1] == '-' && FAMILIES[rid[0]] ? rid[0] : null)
const FUNNEL = { 'view-page': 'views', 'click-item': 'clicks', 'click-suggestion': 'clicks', 'add-to-cart': 'carts', purchase: 'purchases' }

const sessionKey = (user) => {
  const field = (name) => (user && typeof user == 'object' && typeof user[name] == 'string' ? clip(user[name], 32) : '')
  return field('uid') + '\n' + field('sid')
}

/** Moves `key` to the newest end of `map`, and drops the oldest entry past `limit`. */
function touch(map, key, value, limit) {
  map.delete(key)
  map.set(key, value)
  if (map.size > limit) map.delete(map.keys().next().value)
}

/**
 * Follows `collector`. `seesDiscovery` says that this server answers the discovery routes and
 * reports each rid through `responded`, so that a rid it never returned is a lint; without it
 * only a rid's shape is checked. `productUrl` is the RegExp of product page URLs.
 */
export function createActivity({ collector, seesDiscovery = false, productUrl = PRODUCT_URL, maxSessions = 1000, maxRids = 10000 }) {
  const sessions = new Map()
  const rids = new Map()
  const responses = { a: 0, s: 0, c: 0, r: 0 }
  const clicks = { a: 0, s: 0, c: 0, r: 0 }
  const lintCounts = {}
  const recent = []
  const listeners = new Set()
  const statsListeners = new Set()
  let statsTimer = null

  const emitStats = () => {
    statsTimer = null
    const stats = snapshot()
    for (const listener of statsListeners) listener(stats)
  }
  // The timer coalesces a burst of events or responses, so that the charts are redrawn once.
  const statsChanged = () => {
    if (!statsTimer && statsListeners.size) statsTimer = setTimeout(emitStats, STATS_EVERY_MS).unref()
  }

  function session(key) {
    const found = sessions.get(key) || { views: 0, clicks: 0, carts: 0, purchases: 0, recentClicks: [] }
    touch(sessions, key, found, maxSessions)
    return found
  }

  function observe(message) {
    const key = message.type == 'rejected' ? null : sessionKey(message.envelope.user)
    const state = key == null ? null : session(key)
    const lints = lint(message, {
      session: key,
      clicks: state ? state.recentClicks : [],
      returnedTo: seesDiscovery ? (rid) => rids.get(rid) : null,
      productUrl
    })
    if (message.type == 'accepted') {
      const { event, properties, t_client } = message.envelope
      if (FUNNEL[event]) state[FUNNEL[event]]++
      if (event == 'click-item') {
        state.recentClicks.push({ item_id: clip(properties.item_id, 200), t_client })
        if (state.recentClicks.length > CLICKS_PER_SESSION) state.recentClicks.shift()
      }
      // A click carrying a rid counts for its family's click-through (add-to-cart brings its own click-item).
      const family = (event == 'click-item' || event == 'click-suggestion') && familyOf(properties.rid)
      if (family) clicks[family]++
    }
    for (const { code } of lints) lintCounts[code] = (lintCounts[code] || 0) + 1
    const annotated = { ...message, lints }
    recent.push(annotated)
    if (recent.length > RECENT) recent.shift()
    for (const listener of listeners) listener(annotated)
    statsChanged()
  }

  /** Returns the funnel of the sessions active last, click-through per family and the lint counts. */
  function snapshot() {
    const shown = [...sessions].slice(-SESSIONS_SHOWN).reverse()
    return {
      sessions: sessions.size,
      funnel: shown.map(([key, { views, clicks, carts, purchases }]) => {
        const [uid, sid] = key.split('\n')
        return { uid, sid, views, clicks, carts, purchases }
      }),
      clickThrough: Object.entries(FAMILIES).map(([prefix, family]) => ({ prefix, family, clicks: clicks[prefix], responses: responses[prefix] })),
      seesDiscovery,
      lints: { ...lintCounts }
    }
  }

  collector.subscribe(observe)

  return {
    /** Hears that a discovery response of this server returned `rid` to `user` (its request's user object). */
    responded(rid, user) {
      const family = familyOf(rid)
      if (!family) return
      responses[family]++
      const key = sessionKey(user)
      touch(rids, rid, key == '\n' ? '' : key, maxRids)
      statsChanged()
    },
    /** Calls back with every collector message and its lints; returns the unsubscribe. */
    subscribe(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    /** Calls back with a fresh snapshot shortly after anything changed; returns the unsubscribe. */
    subscribeStats(listener) {
      statsListeners.add(listener)
      return () => statsListeners.delete(listener)
    },
    /** Returns the last messages with their lints, for an inspector that connects late. */
    recent: () => recent.slice(),
    snapshot
  }
}
