/**
 * The browser lets a page have 64 KiB of keepalive requests in flight (Fetch standard,
 * "keepalive"), shared with every other script; the page-side senders never take more than that
 * themselves.
 */
export const KEEPALIVE_BUDGET = 65536

/**
 * The keepalive bytes that requests in flight hold. A loop, not reduce(): Prototype.js 1.6
 * replaces Array.prototype.reduce with a function that ignores its arguments, and keepalive
 * would never be used on such pages.
 */
export const keepaliveHeld = (requests: Iterable<{ held?: number }>) => {
  let sum = 0
  for (const request of requests) sum += request.held || 0
  return sum
}
