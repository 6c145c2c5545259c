/*
 * What the relay drops, said in words and not only in a metric: a shop that lost events finds
 * the reason in its logs. Each kind is told at once the first time, then at most once a minute,
 * with the count since the last notice, so that a bot crawling all night makes one line a minute.
 */

/** Why the relay drops events: a bot's agent (`bots: 'drop'`), the rules or the keys, or a server sender without a secret. */
export type DropKind = 'bot' | 'rejected' | 'unproven'

const MINUTE = 60000

const WHY: Record<DropKind, (count: number, example: string) => string> = {
  bot: (count) =>
    `dropped ${count} ${count == 1 ? 'event' : 'events'} of bots' user agents (bots: 'drop'; purchases are kept, marked bot; bots: 'keep' keeps all)`,
  rejected: (count, example) => `refused ${count} ${count == 1 ? 'envelope' : 'envelopes'} by the rules or the keys, such as: ${example}`,
  unproven: (count, example) => `refused ${count} ${count == 1 ? 'request' : 'requests'} of a server sender: ${example}`
}

// An example is a sender's text: one line, cut short, before it reaches a log.
const EXAMPLE_LENGTH = 200
// eslint-disable-next-line no-control-regex -- control characters are what it removes
const asLogText = (text: string) => text.replace(/[\0-\x1f\x7f-\x9f]/g, ' ').slice(0, EXAMPLE_LENGTH)

/** Tells `tell` of drops by kind, at most once a minute per kind. */
export function dropNotices(tell: (error: Error) => void) {
  const waiting = new Map<DropKind, { count: number; example: string }>()
  const lastTold = new Map<DropKind, number>()
  const timers = new Set<DropKind>()

  const flush = (kind: DropKind) => {
    timers.delete(kind)
    const drops = waiting.get(kind)
    if (!drops) return
    waiting.delete(kind)
    lastTold.set(kind, Date.now())
    const notice = new Error('discovery-feedback: relay: ' + WHY[kind](drops.count, drops.example))
    // A notice, not a failure: named so that an onError can tell the two apart.
    notice.name = 'DropNotice'
    tell(notice)
  }

  return (kind: DropKind, count: number, example = '') => {
    if (!count) return
    const drops = waiting.get(kind)
    if (drops) drops.count += count
    else waiting.set(kind, { count, example: asLogText(example) })
    const wait = (lastTold.get(kind) ?? -Infinity) + MINUTE - Date.now()
    if (wait <= 0) return flush(kind)
    if (timers.has(kind)) return
    timers.add(kind)
    // The notice must not keep a process alive that would otherwise end.
    const timer = setTimeout(() => flush(kind), wait) as { unref?: () => void }
    timer.unref?.()
  }
}
