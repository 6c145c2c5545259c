// This module keeps what the inspector knows beyond single events: per session, the funnel and
// the click-items an add-to-cart needs, and per rid, the session a discovery response returned it
// to. Every collector message passes through here once and leaves with its lints (lints.ts).
// All of it is bounded, whatever clients send: sessions, rids and clicks beyond the limits push
// out the oldest.
import { lint, PRODUCT_URL, type SeenClick } from './lints'
import { clip } from './messages'
import type { Activity, ActivityStats, Collector, CollectorMessage, LintedMessage } from './types'

const RECENT = 100
const CLICKS_PER_SESSION = 20
// The inspector draws the sessions active last, since a handful reads at a glance.
const SESSIONS_SHOWN = 8
// The inspector's charts are sent again at most this often while events and responses arrive.
const STATS_EVERY_MS = 250

// SPEC "Response meta object": the rid's one-letter prefix names the route family.
const FAMILIES = { a: 'autocomplete', s: 'search', c: 'collection', r: 'recommendation' }
type Family = keyof typeof FAMILIES
const familyOf = (rid: unknown): Family | null => (typeof rid == 'string' && rid[1] == '-' && Object.hasOwn(FAMILIES, rid[0]!) ? (rid[0] as Family) : null)
const FUNNEL = { 'view-page': 'views', 'click-item': 'clicks', 'click-suggestion': 'clicks', 'add-to-cart': 'carts', purchase: 'purchases' } as const

interface Session {
  views: number
  clicks: number
  carts: number
  purchases: number
  recentClicks: SeenClick[]
}

const sessionKey = (user: unknown) => {
  const field = (name: string) => {
    const value = user && typeof user == 'object' ? (user as Record<string, unknown>)[name] : undefined
    return typeof value == 'string' ? clip(value, 32) : ''
  }
  return field('uid') + '\n' + field('sid')
}

/** Moves `key` to the newest end of `map`, and drops the oldest entry past `limit`. */
function touch<V>(map: Map<string, V>, key: string, value: V, limit: number) {
  map.delete(key)
  map.set(key, value)
  if (map.size > limit) map.delete(map.keys().next().value!)
}

/** Listeners of one kind, as a set with its subscribe. */
function listenerSet<T>() {
  const listeners = new Set<(value: T) => void>()
  return {
    size: () => listeners.size,
    emit: (value: T) => listeners.forEach((listener) => listener(value)),
    subscribe: (listener: (value: T) => void) => {
      listeners.add(listener)
      return () => void listeners.delete(listener)
    }
  }
}

/** The options of `createActivity()`. */
export interface ActivityOptions {
  /** The collector whose messages are followed. */
  collector: Pick<Collector, 'subscribe'>
  /** That this server answers the discovery routes and reports each rid through `responded`, so that a rid it never returned is a lint. Default false: only a rid's shape is checked. */
  seesDiscovery?: boolean | undefined
  /** The RegExp of product page URLs, for the lints about product pages. */
  productUrl?: RegExp | undefined
  /** Sessions remembered at most, the oldest forgotten first. Default 1,000. */
  maxSessions?: number
  /** Rids remembered at most, the oldest forgotten first. Default 10,000. */
  maxRids?: number
}

/**
 * Follows a collector's messages: each session's funnel, the rids its discovery responses
 * returned, and the lints of each event, for the inspector.
 * @param options - The collector to follow, and what this server sees.
 */
export function createActivity(options: ActivityOptions): Activity {
  const { collector, seesDiscovery = false, productUrl = PRODUCT_URL, maxSessions = 1000, maxRids = 10000 } = options
  const sessions = new Map<string, Session>()
  const rids = new Map<string, string>()
  const responses = { a: 0, s: 0, c: 0, r: 0 }
  const clicks = { a: 0, s: 0, c: 0, r: 0 }
  const lintCounts: Record<string, number> = {}
  // Orders by their first copy's reporter, and by the reporter whose copy came second.
  const firstBy = { browser: 0, server: 0 }
  const secondBy = { browser: 0, server: 0 }
  let differing = 0
  const recent: LintedMessage[] = []
  const messages = listenerSet<LintedMessage>()
  const stats = listenerSet<ActivityStats>()
  let statsTimer: ReturnType<typeof setTimeout> | null = null

  // The timer coalesces a burst of events or responses, so that the charts are redrawn once.
  const statsChanged = () => {
    if (statsTimer || !stats.size()) return
    statsTimer = setTimeout(() => {
      statsTimer = null
      stats.emit(snapshot())
    }, STATS_EVERY_MS).unref()
  }

  function session(key: string) {
    const found = sessions.get(key) || { views: 0, clicks: 0, carts: 0, purchases: 0, recentClicks: [] }
    touch(sessions, key, found, maxSessions)
    return found
  }

  /** Counts an accepted event in its session's funnel and its family's click-through. */
  function count(message: CollectorMessage & { type: 'accepted' }, state: Session) {
    const envelope = message.envelope
    const step = FUNNEL[envelope.event as keyof typeof FUNNEL]
    if (step) state[step]++
    if (envelope.event == 'click-item') {
      state.recentClicks.push({ item_id: clip(envelope.properties.item_id, 200), t_client: envelope.t_client })
      if (state.recentClicks.length > CLICKS_PER_SESSION) state.recentClicks.shift()
    }
    // A click carrying a rid counts for its family's click-through (add-to-cart brings its own click-item).
    const family = (envelope.event == 'click-item' || envelope.event == 'click-suggestion') && familyOf(envelope.properties.rid)
    if (family) clicks[family]++
  }

  function observe(message: CollectorMessage) {
    const key = message.type == 'rejected' ? null : sessionKey(message.envelope.user)
    const state = key == null ? null : session(key)
    const lints = lint(message, {
      session: key,
      clicks: state ? state.recentClicks : [],
      returnedTo: seesDiscovery ? (rid) => rids.get(rid) : null,
      productUrl
    })
    if (message.type == 'accepted' && state) count(message, state)
    if (message.type != 'rejected' && message.order) {
      ;(message.order.order == 'first' ? firstBy : secondBy)[message.order.reporter]++
      if (message.order.differences.length) differing++
    }
    for (const { code } of lints) lintCounts[code] = (lintCounts[code] || 0) + 1
    const annotated = { ...message, lints }
    recent.push(annotated)
    if (recent.length > RECENT) recent.shift()
    messages.emit(annotated)
    statsChanged()
  }

  function snapshot(): ActivityStats {
    const shown = [...sessions].slice(-SESSIONS_SHOWN).reverse()
    return {
      orders: {
        browserOnly: firstBy.browser - secondBy.server,
        serverOnly: firstBy.server - secondBy.browser,
        both: secondBy.browser + secondBy.server,
        differing
      },
      sessions: sessions.size,
      funnel: shown.map(([key, { views, clicks, carts, purchases }]) => {
        const [uid = '', sid = ''] = key.split('\n')
        return { uid, sid, views, clicks, carts, purchases }
      }),
      clickThrough: (Object.keys(FAMILIES) as Family[]).map((prefix) => ({
        prefix,
        family: FAMILIES[prefix],
        clicks: clicks[prefix],
        responses: responses[prefix]
      })),
      seesDiscovery,
      lints: { ...lintCounts }
    }
  }

  collector.subscribe(observe)

  return {
    responded(rid, user) {
      const family = familyOf(rid)
      if (!family) return
      responses[family]++
      const key = sessionKey(user)
      touch(rids, rid as string, key == '\n' ? '' : key, maxRids)
      statsChanged()
    },
    subscribe: messages.subscribe,
    subscribeStats: stats.subscribe,
    recent: () => recent.slice(),
    snapshot
  }
}
