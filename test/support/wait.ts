export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Polls until `check` holds; fails after `timeout` ms naming `what`. For node-side tests. */
export async function waitFor(check: () => boolean, what: string, timeout = 5000) {
  const end = Date.now() + timeout
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out waiting for ' + what)
    await sleep(20)
  }
}
