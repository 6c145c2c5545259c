/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** How often waitFor checks its condition, in milliseconds. */
const POLL_MS = 20

/**
 * Checks `check` every 20 ms until it holds; a check may ask a page and return a promise. It fails after `timeout` milliseconds with an error
 * that names `what`. The default of 5 seconds suits the node-side tests; the browser tests pass
 * their own timeout.
 */
export async function waitFor(check: () => boolean | Promise<boolean>, what: string, timeout = 5000) {
  const end = Date.now() + timeout
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out waiting for ' + what)
    await sleep(POLL_MS)
  }
}
