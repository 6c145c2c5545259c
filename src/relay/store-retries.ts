/*
 * Writes to the store that must not be lost to a moment's failure, tried again while it fails.
 *
 * After the sink answered, its answer is final: the events reached it (to be marked delivered)
 * or did not (to be let go). After a claim failed, the request is answered 503, and what it may
 * have claimed is to be let go, on the slot that failed too: a command cut off by a crash may
 * have run there, and been passed on to the replica that takes over. A store that fails at such a
 * moment (a Redis Cluster master that crashed, before its replica takes over) would leave those
 * claims to lapse on their own, after claimMs: a resend meanwhile is answered 503, and once they
 * lapse, the events it carries that had reached the sink reach it again. Written again once the
 * store is back, a few seconds later on a failover, the resend finds them delivered, or free.
 */

const FIRST_RETRY_MS = 250
const LONGEST_WAIT_MS = 2000

const sleep = (ms: number) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms)
    // Node's timer, unref'd: a relay shutting down does not wait for these.
    ;(timer as { unref?: () => void }).unref?.()
  })

/**
 * Runs `write` now; when it fails, reports the failure and tries again in the background, each
 * wait doubling up to 2 s, until it succeeds or `forMs` (the claims' time) has passed. Resolves
 * after the first try, whatever it did: the answer to the request does not wait for the store.
 */
export async function writeWithRetries(write: () => Promise<unknown>, forMs: number, report: (error: unknown) => void): Promise<void> {
  try {
    await write()
    return
  } catch (error) {
    report(error)
  }
  const until = Date.now() + forMs
  void (async () => {
    for (let wait = FIRST_RETRY_MS; Date.now() + wait < until; wait = Math.min(wait * 2, LONGEST_WAIT_MS)) {
      await sleep(wait)
      try {
        await write()
        return
      } catch {
        // Reported once, above: a store that is down says so on every request anyway.
      }
    }
  })()
}
