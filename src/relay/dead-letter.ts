import type { Metrics } from './metrics'
import type { DeadLetter, DeadLetterSink } from './types'

// Calls of the dead-letter sink in flight at once; beyond, refused envelopes are dropped and
// counted. A sink that hangs holds at most this many calls, and never a page's answer.
const MAX_CALLS = 16

/**
 * Hands refused envelopes to the shop's dead-letter sink, for it to see and replay what its pages
 * sent wrong, without waiting: the page's answer never hangs on it, and a sink that throws, fails
 * or hangs changes nothing of it. Failures reach `report` (the relay's onError).
 */
export function deadLetters(sink: DeadLetterSink | undefined, metrics: Metrics, report: (error: unknown) => void) {
  let calls = 0
  return (letters: DeadLetter[]) => {
    if (!sink || !letters.length) return
    if (calls >= MAX_CALLS) return metrics.deadLetters('dropped', letters.length)
    calls++
    // Called from a promise: a sink that throws at once fails like one that rejects.
    Promise.resolve()
      .then(() => sink(letters))
      .then(
        () => metrics.deadLetters('delivered', letters.length),
        (error) => {
          metrics.deadLetters('failed', letters.length)
          report(error)
        }
      )
      .finally(() => calls--)
  }
}
