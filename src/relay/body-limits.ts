/*
 * How many bodies one client address may have arriving at once, and for how long. A body is held
 * in memory while it arrives (up to maxBodyBytes), so a sender that opens many requests and never
 * finishes them would hold that much memory each, for as long as it likes. A browser sends a
 * tracker's few requests at a time, each a body of at most 64 KiB (the keepalive budget), read in
 * milliseconds; many shoppers behind one address (an office, a carrier's NAT) rarely have more
 * than a few arriving at the same moment.
 */

// Bodies of one client address arriving at once; a request beyond is answered 429 unread.
export const OPEN_BODIES_PER_ADDRESS = 32

// Milliseconds a body may take to arrive whole; a slower one is answered 408 and its
// connection closed. The tracker's bodies take well under a second, even on a slow mobile link.
export const BODY_TIMEOUT_MS = 10000

/** Counts the bodies each client address has arriving. */
export function openBodies(max = OPEN_BODIES_PER_ADDRESS) {
  const open = new Map<string, number>()
  return {
    /** Counts one more of `client`'s bodies arriving; false, counting nothing, when it has `max` already. */
    enter(client: string): boolean {
      const count = open.get(client) || 0
      if (count >= max) return false
      open.set(client, count + 1)
      return true
    },
    /** One of `client`'s bodies is read, or given up. */
    leave(client: string) {
      const count = (open.get(client) || 1) - 1
      // Only addresses with bodies arriving are kept: the map never outgrows the open connections.
      if (count) open.set(client, count)
      else open.delete(client)
    }
  }
}
