// This module decides who may use the demo. The collector and the discovery routes take API keys,
// and the live inspector takes a token, since it shows every shopper's identity and so is not for
// anyone who finds the port.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { readFileSync } from 'node:fs'

// The demo store's pages send this key.
export const DEMO_KEY = 'demo-key'

// SPEC "Errors": a request without an API key gets a message saying one must be provided.
export const KEY_MISSING = 'An API key must be provided.'
export const KEY_INVALID = 'The API key is not valid.'

/**
 * What is wrong with the key a request or an envelope gave: '' when it is fine. Without `keys`
 * every non-empty key is taken. Keys are sent in every shop page, so they are no secret worth a
 * constant-time comparison: a set lookup does.
 */
export function keyFault(given, keys) {
  if (typeof given != 'string' || !given) return KEY_MISSING
  return keys && !keys.has(given) ? KEY_INVALID : ''
}

/** Returns the keys from `COLLECTOR_KEYS` (comma-separated) and the file `COLLECTOR_KEYS_FILE` names (one a line). */
export function keysFromEnv(env) {
  const listed = (env.COLLECTOR_KEYS || '').split(',')
  const filed = env.COLLECTOR_KEYS_FILE ? readFileSync(env.COLLECTOR_KEYS_FILE, 'utf8').split('\n') : []
  return [...listed, ...filed].map((key) => key.trim()).filter(Boolean)
}

export const newToken = () => randomBytes(24).toString('base64url')

// Digests have one length whatever was given, so timingSafeEqual can compare them (it throws on
// unequal lengths) and the time taken tells nothing about the token, not even its length.
const digest = (text) => createHash('sha256').update(text).digest()
const sameSecret = (given, secret) => typeof given == 'string' && timingSafeEqual(digest(given), digest(secret))

const COOKIE = 'df_inspector'

/**
 * Returns the inspector's credential. It is `token` in the URL the demo prints, traded on the
 * first visit for a cookie that only /inspector and its feed receive, which scripts cannot read
 * (HttpOnly) and other sites cannot make the browser send (SameSite=Strict).
 */
export function inspectorAccess(token) {
  // The cookie holds the token encoded, so that a token chosen through INSPECTOR_TOKEN makes a
  // valid cookie whatever it holds.
  const value = encodeURIComponent(token)
  return {
    tokenMatches: (given) => sameSecret(given, token),
    cookieMatches: (header) =>
      String(header || '')
        .split(';')
        .map((part) => part.trim().split('='))
        .some(([name, ...rest]) => name == COOKIE && sameSecret(rest.join('='), value)),
    setCookie: `${COOKIE}=${value}; Path=/inspector; HttpOnly; SameSite=Strict`
  }
}
