import { vi } from 'vitest'

const jar = Object.getOwnPropertyDescriptor(Document.prototype, 'cookie')!

/**
 * Records each cookie the page writes through document.cookie as a call of the returned mock:
 * (name, value, attributes), the attributes by name as a cookie library takes them (`path`,
 * `domain`, `max-age`, `sameSite`, `secure`). The write still reaches the page's cookies.
 * vi.restoreAllMocks() ends it.
 */
export function spyOnCookieWrites() {
  const set = vi.fn((name: string, value: string, attributes: Record<string, unknown>) => [name, value, attributes])
  vi.spyOn(document, 'cookie', 'set').mockImplementation((text: string) => {
    const [pair, ...parts] = text.split(/; */)
    const [name, value] = pair.split('=')
    const attributes: Record<string, unknown> = { secure: false }
    for (const part of parts) {
      const [key, setting] = part.split('=')
      const lower = key.toLowerCase()
      if (lower == 'secure') attributes.secure = true
      else attributes[lower == 'samesite' ? 'sameSite' : lower] = setting
    }
    set(name, value, attributes)
    jar.set!.call(document, text)
  })
  return set
}

/** Makes the page's cookies unreadable, as a browser that blocks them: every read finds none. */
export const blockCookieReads = () => vi.spyOn(document, 'cookie', 'get').mockReturnValue('')
