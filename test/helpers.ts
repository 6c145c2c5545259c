import Cookies from 'js-cookie'
import { vi } from 'vitest'
import type { Envelope } from '../src/types'

/** Installs a recording sendBeacon (jsdom has none) and returns the events it was given. */
export function recordBeacons(accept: (body: string) => boolean = () => true) {
  const bodies: string[] = []
  const sendBeacon = vi.fn((_url: string, body: string) => {
    const taken = accept(body)
    if (taken) bodies.push(body)
    return taken
  })
  Object.defineProperty(navigator, 'sendBeacon', { value: sendBeacon, configurable: true, writable: true })
  return {
    sendBeacon,
    bodies,
    events: () => bodies.flatMap((body) => JSON.parse(body) as Envelope[])
  }
}

export function setVisibility(state: 'visible' | 'hidden') {
  Object.defineProperty(document, 'visibilityState', { value: state, configurable: true })
  document.dispatchEvent(new Event('visibilitychange'))
}

export function resetPage() {
  for (const name of Object.keys(Cookies.get())) Cookies.remove(name, { path: '/' })
  Object.defineProperty(document, 'visibilityState', { value: 'visible', configurable: true })
  history.replaceState(null, '', '/')
}
