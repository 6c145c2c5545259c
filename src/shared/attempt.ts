/**
 * Runs what the page around us may make throw and returns its result, or undefined if it
 * threw: document.cookie and localStorage throw a SecurityError in a frame sandboxed without
 * allow-same-origin (and localStorage when blocked), a full storage throws on a write, and a
 * page may replace console, sendBeacon or fetch with something that throws.
 */
export const attempt = <T>(work: () => T): T | undefined => {
  try {
    return work()
  } catch {
    return undefined
  }
}
