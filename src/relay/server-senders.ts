/*
 * Who may speak for a shopper it is not. SPEC "User object" lets a call that is not made from the
 * shopper's browser send the shopper's `ip` and `ua`; a browser never needs to, and whatever a
 * page sends is the page's to forge. So the relay believes `user.ip` and `user.ua` from the body
 * only from the shop's own server senders, which prove themselves with a secret no page holds
 * (`Authorization: Bearer <secret>`); from anyone else they come from the connection.
 */
import { isServerAgent } from '../shared/server-agent'

/**
 * What a request says of its sender: 'proven', the shop's server sender with one of the secrets;
 * 'unproven', a server sender (its agent, or a bearer token) without one; 'page' for the rest.
 */
export type SenderKind = 'proven' | 'unproven' | 'page'

/**
 * Whether `given` is `secret`, in a time that tells nothing of how much of it matched: every
 * character of the secret is compared, whatever `given` is.
 */
function sameSecret(given: string, secret: string): boolean {
  let difference = given.length ^ secret.length
  for (let index = 0; index < secret.length; index++) difference |= secret.charCodeAt(index) ^ (given.charCodeAt(index) || 0)
  return difference == 0
}

/** Tells a request of the shop's server senders by its bearer token: one of `secrets` (several, so that one can be rotated). */
export function serverSenders(secrets: string[] = []) {
  // A secret travels in a header as one word: printable ASCII, no space, or no request could ever carry it.
  if (!Array.isArray(secrets) || secrets.some((secret) => typeof secret != 'string' || !/^[\x21-\x7e]{16,}$/.test(secret)))
    throw new TypeError('discovery-feedback: relay: options.serverSecrets must list secrets of at least 16 characters, printable ASCII without spaces')
  return (request: Request): SenderKind => {
    const header = request.headers.get('authorization')
    const token = header && /^Bearer\s+(\S+)$/i.exec(header)?.[1]
    // Every secret is compared, so the time does not tell which one matched.
    if (token && secrets.map((secret) => sameSecret(token, secret)).includes(true)) return 'proven'
    // Any bearer token at all, well-formed or not, is a server sender's claim.
    return /^Bearer\b/i.test(header || '') || isServerAgent(request.headers.get('user-agent')) ? 'unproven' : 'page'
  }
}

/** What a server sender without one of the relay's secrets is answered. */
export const UNPROVEN_SERVER = 'a server sender must prove itself to the relay: give createServerTracker a secret that the relay lists in its serverSecrets'
