import { letterEnvelope } from './letter-envelope'
import type { Metrics } from './metrics'
import { takeTokens, type Bucket } from './token-bucket'
import type { DeadLetter, DeadLetterSink, RateLimit } from './types'

// Calls of the dead-letter sink in flight at once; beyond, refused envelopes are dropped and
// counted. A sink that hangs holds at most this many calls, and never a page's answer.
const MAX_CALLS = 16

// Bytes of dead letters (their JSON lines in UTF-8, as fileSink writes them) one client address
// may leave: 64 KiB at once (some 30 letters of 2 KiB envelopes, hundreds of small ones), then 64
// a second, 5.5 MB a day. A second look needs a few examples of each mistake, not every copy.
const PER_ADDRESS: RateLimit = { burst: 64 * 1024, perSecond: 64 }
// And every address together: 4 MiB at once, then 4 KiB a second.
const TOTAL: RateLimit = { burst: 4 * 1024 * 1024, perSecond: 4096 }
// Budgets of this many client addresses at most are kept; beyond, the one used longest ago goes.
const MAX_ADDRESSES = 10000

const encoder = new TextEncoder()

// A key as a sender gave it: any text, kept to this many characters.
const KEY_CHARS = 128

/** The key a refused envelope came with: its own, else the request's; '' for none; a sender's text, kept to KEY_CHARS. */
function keyOf(envelope: unknown, requestKey: string | null): string {
  const own = envelope && typeof envelope == 'object' ? (envelope as Record<string, unknown>).key : undefined
  const key = typeof own == 'string' && own ? own : requestKey || ''
  return key.length > KEY_CHARS ? key.slice(0, KEY_CHARS) + '…' : key
}

/** A refused envelope's letter: its envelope as letter-envelope.ts keeps it. */
function letterOf(error: string, envelope: unknown, requestKey: string | null, refusedAt: number): DeadLetter {
  const kept = letterEnvelope(envelope)
  const letter: DeadLetter = { error, key: keyOf(envelope, requestKey), refused_at: refusedAt, envelope: kept.envelope }
  if (kept.truncated) letter.truncated = true
  return letter
}

/**
 * Hands refused envelopes to the shop's dead-letter sink, for it to see and replay what its pages
 * sent wrong, without waiting: the page's answer never hangs on it, and a sink that throws, fails
 * or hangs changes nothing of it. Each client address leaves at most its share, and all of them
 * together at most the total; letters beyond are dropped and counted, so that no sender can fill
 * the shop's disk. Failures reach `report` (the relay's onError).
 */
export function deadLetters(sink: DeadLetterSink | undefined, metrics: Metrics, report: (error: unknown) => void) {
  let calls = 0
  const budgets = new Map<string, Bucket>()
  let total: Bucket | undefined

  /** Whether `client` (undefined: the shop's server sender, held by the total only) may leave `size` more bytes. */
  function within(client: string | undefined, size: number): boolean {
    const now = Date.now()
    let own: Bucket | undefined
    if (client !== undefined) {
      const [bucket, wait] = takeTokens(budgets.get(client), size, PER_ADDRESS, now)
      if (wait) return false
      own = bucket
    }
    const [bucket, wait] = takeTokens(total, size, TOTAL, now)
    if (wait) return false
    total = bucket
    if (client !== undefined) {
      // Set again, so that the map's order is the order of use.
      budgets.delete(client)
      budgets.set(client, own!)
      if (budgets.size > MAX_ADDRESSES) budgets.delete(budgets.keys().next().value!)
    }
    return true
  }

  /**
   * Hands a batch's refused envelopes on, each with its error, as letters: `requestKey` is the
   * key the request gave, `client` the address it came from (undefined for the shop's server sender).
   */
  return (refused: { error: string; envelope: unknown }[], requestKey: string | null, refusedAt: number, client: string | undefined) => {
    if (!sink || !refused.length) return
    if (calls >= MAX_CALLS) return metrics.deadLetters('dropped', refused.length)
    const letters = refused.map(({ error, envelope }) => letterOf(error, envelope, requestKey, refusedAt))
    const kept = letters.filter((letter) => within(client, encoder.encode(JSON.stringify(letter)).length + 1))
    if (kept.length < letters.length) metrics.deadLetters('dropped', letters.length - kept.length)
    if (!kept.length) return
    calls++
    // Called from a promise: a sink that throws at once fails like one that rejects.
    Promise.resolve()
      .then(() => sink(kept))
      .then(
        () => metrics.deadLetters('delivered', kept.length),
        (error) => {
          metrics.deadLetters('failed', kept.length)
          report(error)
        }
      )
      .finally(() => calls--)
  }
}
