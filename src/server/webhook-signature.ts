/*
 * The signature of an order webhook: Shopify (X-Shopify-Hmac-Sha256) and WooCommerce
 * (X-WC-Webhook-Signature) both send base64(HMAC-SHA256(secret, raw body)). It is checked over
 * the body's bytes as they came, before anything parses them. Web Crypto's verify compares the
 * digests in constant time (Node does so with OpenSSL's CRYPTO_memcmp), so the time of a 401
 * tells a forger nothing of how much of a guess was right; and it runs wherever the handler does
 * (Node, workers, Deno, Bun).
 */

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/

/** The bytes of a base64 header, or undefined when it is none. */
function decodeBase64(text: string): Uint8Array<ArrayBuffer> | undefined {
  const trimmed = text.trim()
  if (!BASE64.test(trimmed) || trimmed.length % 4) return undefined
  return Uint8Array.from(atob(trimmed), (character) => character.charCodeAt(0))
}

/** Makes the check of signatures made with `secret`; its key is imported once. */
export function signatureCheck(secret: string) {
  const key = crypto.subtle.importKey('raw', new TextEncoder().encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify'])
  /** Whether `signature` (the header as it came; null when there is none) signs `body`. */
  return async (body: Uint8Array<ArrayBuffer>, signature: string | null): Promise<boolean> => {
    const given = signature && decodeBase64(signature)
    if (!given) return false
    return crypto.subtle.verify('HMAC', await key, given, body)
  }
}
