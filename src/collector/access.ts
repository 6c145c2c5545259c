// This module decides who may use the collector and the inspector. The collector takes API keys,
// and the live inspector takes a token, since it shows every shopper's identity and so is not for
// anyone who finds the port.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { readFileSync } from 'node:fs'

// The demo store's pages send this key, and a collector given no keys takes it, so that a first
// try with the demo's pages works.
/** The demo store's API key, which a collector given no keys takes. */
export const DEMO_KEY = 'demo-key'

// SPEC "Errors": a request without an API key gets a message saying one must be provided. These
// are the relay's texts, which the collector answers with.
/** The collector's answer to an event without an API key. */
export const KEY_MISSING = 'An API key must be provided.'
/** The collector's answer to an event whose API key it does not take. */
export const KEY_INVALID = 'The API key is not valid.'

/** The environment variables keysFromEnv reads. */
export interface KeysEnv {
  /** API keys, comma-separated. */
  COLLECTOR_KEYS?: string | undefined
  /** A file of API keys, one a line. */
  COLLECTOR_KEYS_FILE?: string | undefined
}

/**
 * Returns the keys from `COLLECTOR_KEYS` (comma-separated) and the file `COLLECTOR_KEYS_FILE` names (one a line).
 * @param env - The environment, such as `process.env`.
 */
export function keysFromEnv(env: KeysEnv): string[] {
  const listed = (env.COLLECTOR_KEYS || '').split(',')
  const filed = env.COLLECTOR_KEYS_FILE ? readFileSync(env.COLLECTOR_KEYS_FILE, 'utf8').split('\n') : []
  return [...listed, ...filed].map((key) => key.trim()).filter(Boolean)
}

export const newToken = (): string => randomBytes(24).toString('base64url')

// Digests have one length whatever was given, so timingSafeEqual can compare them (it throws on
// unequal lengths) and the time taken tells nothing about the token, not even its length.
const digest = (text: string) => createHash('sha256').update(text).digest()
const sameSecret = (given: unknown, secret: string) => typeof given == 'string' && timingSafeEqual(digest(given), digest(secret))

const COOKIE = 'df_inspector'

/**
 * Returns the inspector's credential. It is `token` in the URL the server prints, traded on the
 * first visit for a cookie that only /inspector and its feed receive, which scripts cannot read
 * (HttpOnly) and other sites cannot make the browser send (SameSite=Strict).
 */
export function inspectorAccess(token: string) {
  // The cookie holds the token encoded, so that a token chosen through INSPECTOR_TOKEN makes a
  // valid cookie whatever it holds.
  const value = encodeURIComponent(token)
  return {
    tokenMatches: (given: unknown) => sameSecret(given, token),
    cookieMatches: (header: string | undefined) =>
      String(header || '')
        .split(';')
        .map((part) => part.trim().split('='))
        .some(([name, ...rest]) => name == COOKIE && sameSecret(rest.join('='), value)),
    setCookie: `${COOKIE}=${value}; Path=/inspector; HttpOnly; SameSite=Strict`
  }
}
