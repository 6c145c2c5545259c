import { attempt } from '../shared/attempt'

/**
 * Hands a body to the browser to send even after the page is gone. False when it is missing
 * (some in-app browsers) or refused: Chromium refuses once the page has 64 KiB of keepalive
 * requests in flight. True means queued by the browser, not delivered.
 */
export const beacon = (url: string, body: string) => !!attempt(() => navigator.sendBeacon(url, body))
