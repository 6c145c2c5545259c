// A Standard API in memory, for unit tests of connectShopify in Node: the cookie jar and the
// storage answer asynchronously, as Shopify's top frame does, and keep every write for the tests
// to read. The real sandboxes, in Chromium, are in sandboxes.e2e.test.ts.
import type { CustomerPrivacyPayload, RegisterInit } from '@shopify/web-pixels-extension'
import type { PixelApi } from '../../src/shopify'
import { consent, contextFor, registerInit } from './events'

type Callback = (event: never) => void

export const CHECKOUT_URL = 'https://demo-store.example/checkouts/cn/c1a9b3e07f6d4c2a8e5b0d9f1a2b3c4d/thank-you'

/** Reads one cookie assignment as document.cookie would take it: the name, the value and whether it deletes. */
function parseAssignment(text: string) {
  const [pair, ...attributes] = text.split(';').map((part) => part.trim())
  const [name, ...value] = pair.split('=')
  const deletes = attributes.some((attribute) => /^max-age=(0|-\d+)$/i.test(attribute))
  return { name, value: value.join('='), deletes }
}

/** Calls of the top frame that fail: `storage` rejects every storage call, `cookie` (when set) is what every cookie call rejects with. */
export interface Failures {
  storage?: boolean
  cookie?: { reason: unknown }
}

export function fakeApi({
  cookies = {},
  customerPrivacy = consent(true),
  href = CHECKOUT_URL,
  stored = new Map<string, string>(),
  failures = {}
}: {
  cookies?: Record<string, string>
  customerPrivacy?: RegisterInit['customerPrivacy']
  href?: string
  stored?: Map<string, string>
  failures?: Failures
} = {}) {
  const jar = new Map(Object.entries(cookies))
  const cookieWrites: string[] = []
  const subscribers = new Map<string, Callback[]>()
  const privacy: Callback[] = []
  let seq = 0

  // Each call answers a task later, as a message from the top frame would.
  const storageCall =
    <A extends unknown[], R>(work: (...args: A) => R) =>
    async (...args: A): Promise<R> => {
      await new Promise((resolve) => setTimeout(resolve))
      if (failures.storage) throw new DOMException('The operation is insecure.', 'SecurityError')
      return work(...args)
    }
  const storage = {
    getItem: storageCall((key: string) => stored.get(key) ?? null),
    setItem: storageCall((key: string, value: string) => void stored.set(key, String(value))),
    removeItem: storageCall((key: string) => void stored.delete(key)),
    key: storageCall((index: number) => [...stored.keys()][index] ?? null),
    length: storageCall(() => stored.size),
    clear: storageCall(() => stored.clear())
  }
  const cookieCall =
    <A extends unknown[], R>(work: (...args: A) => R) =>
    async (...args: A): Promise<R> => {
      await new Promise((resolve) => setTimeout(resolve))
      if (failures.cookie) throw failures.cookie.reason
      return work(...args)
    }

  const api: PixelApi = {
    init: registerInit({ context: contextFor(href), customerPrivacy }),
    analytics: {
      subscribe(name: string, callback: Callback) {
        subscribers.set(name, [...(subscribers.get(name) || []), callback])
        return () => true
      }
    } as PixelApi['analytics'],
    customerPrivacy: {
      subscribe(name: string, callback: Callback) {
        if (name == 'visitorConsentCollected') privacy.push(callback)
        return () => true
      }
    } as PixelApi['customerPrivacy'],
    browser: {
      cookie: {
        get: cookieCall((name?: string) => (name ? (jar.get(name) ?? '') : [...jar].map(([key, value]) => key + '=' + value).join('; '))),
        set: cookieCall((text: string) => {
          cookieWrites.push(text)
          const { name, value, deletes } = parseAssignment(text)
          if (deletes) jar.delete(name)
          else jar.set(name, value)
          return text
        })
      },
      localStorage: storage,
      sessionStorage: storage,
      sendBeacon: async () => false
    }
  }

  return {
    api,
    jar,
    cookieWrites,
    stored,
    failures,
    /** Publishes a standard event with Shopify's fields, the page at `at` in its context. */
    publish(name: string, data: unknown, at = href) {
      const event = {
        id: 'sh-' + seq,
        clientId: 'client-1',
        name,
        seq: seq++,
        timestamp: new Date().toISOString(),
        type: 'standard',
        context: contextFor(at),
        data
      }
      for (const callback of subscribers.get(name) || []) callback(event as never)
    },
    /** The visitor answered the banner. */
    collectConsent(allowed: boolean) {
      const payload: CustomerPrivacyPayload = { customerPrivacy: consent(allowed) }
      for (const callback of privacy) callback(payload as never)
    }
  }
}
