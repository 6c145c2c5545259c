/*
 * Which events a bot sent: crawlers, monitors and headless browsers walk shops all night, and
 * their page views would feed the service's "viewed also viewed" and inflate every rate. The
 * user agent judged is the one SPEC's `user.ua` holds once the relay set it: the request's own
 * for a page, since a page's word is worth nothing; the shopper's for the shop's server sender
 * with a secret, whose request's own agent is a script's. The list is isbot's, kept up to date
 * by its maintainers.
 */
import { isbot } from 'isbot'
import type { BatchReport, RelayEvent } from './types'

// Agents judged lately, and their verdict: a shop's traffic is a few thousand agents a day, and
// isbot's pattern costs a few microseconds a test.
const KNOWN = 1000

/** Tells whether a user agent is a known bot's, crawler's or headless browser's; none is nobody's. */
export function botJudge() {
  const known = new Map<string, boolean>()
  return (ua: string | undefined): boolean => {
    if (!ua) return false
    let verdict = known.get(ua)
    if (verdict === undefined) {
      verdict = isbot(ua)
      if (known.size >= KNOWN) known.delete(known.keys().next().value!)
      known.set(ua, verdict)
    }
    return verdict
  }
}

/**
 * Sorts a request's events by the relay's `bots` option: returns those to store, and puts the
 * dropped ones in the batch's report. Every event of a bot's agent is marked `bot`; with 'drop'
 * all but purchases go no further. A purchase is kept whatever its agent: a headless browser in a
 * shop's own checkout automation, an app's web view or a false positive of the list may well be
 * a real order, and a bot that buys is worth the merchant's knowing.
 */
export function botSorter(mode: 'drop' | 'keep') {
  const isBot = botJudge()
  return (events: RelayEvent[], batch: BatchReport): RelayEvent[] => {
    const sent = events.filter((event) => isBot(event.user.ua))
    if (!sent.length) return events
    sent.forEach((event) => (event.bot = true))
    if (mode == 'keep') return events
    const dropped = new Set(sent.filter((event) => event.event != 'purchase'))
    batch.bots = [...dropped]
    return events.filter((event) => !dropped.has(event))
  }
}
