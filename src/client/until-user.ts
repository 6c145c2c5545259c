import type { User } from '../shared/types'

// How often a request that waits for its user asks again, in milliseconds.
const ASK_EVERY_MS = 50

/**
 * Resolves once `user()` gives a user, or once `ms` have passed, or once `signal` has aborted,
 * whichever comes first. The script-tag tracker loads async and tells no one when it has (it
 * replaces the page's stub, docs/guide/script-tag.md), so there is no event to wait for: the user is
 * asked for again every 50 ms.
 */
export const untilUser = (user: () => User | undefined, ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const end = Date.now() + ms
    const ask = () => (user() || signal?.aborted || Date.now() >= end ? resolve() : setTimeout(ask, ASK_EVERY_MS))
    ask()
  })
