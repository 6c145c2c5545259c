/**
 * The browser lets a page have 64 KiB of keepalive requests in flight (Fetch standard,
 * "keepalive"), shared with every other script; the page-side senders never take more than that
 * themselves.
 */
export const KEEPALIVE_BUDGET = 65536
