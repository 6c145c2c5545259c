import Cookies from 'js-cookie'
import { afterEach, beforeEach, vi } from 'vitest'
import { createTracker } from '../../src/browser/tracker'
import type { Envelope, Tracker, TrackerOptions } from '../../src/index'

export const ENDPOINT = 'https://collector.example/v3/feedback'
const made: Tracker[] = []

/** Makes a tracker for a unit test, without the automatic view-page. `isolateEachTest` destroys it. */
export function make(options: Partial<TrackerOptions> = {}) {
  const tracker = createTracker({ key: 'KEY', endpoint: ENDPOINT, autoViewPage: false, ...options })
  made.push(tracker)
  return tracker
}

/** Starts each test on a clean page with fake timers. Afterwards its trackers and stubs are gone. */
export function isolateEachTest() {
  beforeEach(() => {
    resetPage()
    vi.useFakeTimers()
  })
  afterEach(async () => {
    made.splice(0).forEach((tracker) => tracker.destroy())
    // What destroy() sent is answered here, by this test's network: each answer may send the
    // next batch, so a full outbox takes many rounds. A retry or a later batch that the answers
    // planned is dropped with the fake timers: left to real ones, it would fire during another
    // test, or after the file's page is gone.
    for (let round = 0; round < 100; round++) await settle()
    vi.clearAllTimers()
    delete (navigator as { locks?: unknown }).locks
    vi.useRealTimers()
    vi.restoreAllMocks()
    vi.unstubAllGlobals()
  })
}

type Answer = { status: number; headers?: Record<string, string>; body?: string } | 'offline'

/**
 * Stands in for the network with a recording sendBeacon (jsdom has none) and a recording fetch.
 * `answer` decides the fate of each fetch, and `acceptBeacon` decides whether the browser takes
 * a beacon. `events()` lists what reached the collector, which is the beacons taken and the
 * fetches answered with a 2xx status.
 */
export function network(options: { answer?: (body: string) => Answer; acceptBeacon?: (body: string) => boolean } = {}) {
  const delivered: { via: 'beacon' | 'fetch'; url: string; body: string }[] = []
  const sendBeacon = vi.fn((url: string, body: string) => {
    const taken = options.acceptBeacon ? options.acceptBeacon(body) : true
    if (taken) delivered.push({ via: 'beacon', url, body })
    return taken
  })
  const fetch = vi.fn((url: string, init: RequestInit) => {
    const body = init.body as string
    const answer = options.answer ? options.answer(body) : { status: 204 }
    if (answer == 'offline') return Promise.reject(new TypeError('Failed to fetch'))
    if (answer.status < 300) delivered.push({ via: 'fetch', url, body })
    return Promise.resolve(new Response(answer.body ?? null, { status: answer.status, headers: answer.headers }))
  })
  Object.defineProperty(navigator, 'sendBeacon', { value: sendBeacon, configurable: true, writable: true })
  vi.stubGlobal('fetch', fetch)
  return {
    sendBeacon,
    fetch,
    delivered,
    events: () => delivered.flatMap(({ body }) => JSON.parse(body) as Envelope[])
  }
}

export function setVisibility(state: 'visible' | 'hidden') {
  Object.defineProperty(document, 'visibilityState', { value: state, configurable: true })
  document.dispatchEvent(new Event('visibilitychange'))
}

/** Lets pending promise callbacks, such as fetch answers, run under fake timers. */
export const settle = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve()
}

export function resetPage() {
  for (const name of Object.keys(Cookies.get())) Cookies.remove(name, { path: '/' })
  localStorage.clear()
  sessionStorage.clear()
  Object.defineProperty(document, 'visibilityState', { value: 'visible', configurable: true })
  history.replaceState(null, '', '/')
}

/** Lists the events that every outbox in localStorage holds, oldest key first. */
export const stored = (): Envelope[] =>
  Object.keys(localStorage)
    .filter((key) => /^df_q_[^.]+\./.test(key))
    .map((key) => {
      const value = localStorage.getItem(key)!
      return JSON.parse(value.slice(value.indexOf('{')))
    })

/**
 * Provides Web Locks as the browser keeps them, for jsdom, which has none. A lock is held until
 * its callback's promise settles. `die(name)` lets a page's lock go as a crash would.
 */
export function fakeLocks() {
  const held = new Map<string, () => void>()
  const locks = {
    request(name: string, callback: () => Promise<unknown>) {
      const result = callback()
      if (name.startsWith('df_q_') && name.length > 5) {
        held.set(name, () => held.delete(name))
        result.then(() => held.delete(name))
      }
      return result
    },
    query: () => Promise.resolve({ held: [...held.keys()].map((name) => ({ name })) })
  }
  Object.defineProperty(navigator, 'locks', { value: locks, configurable: true })
  return {
    held: () => [...held.keys()],
    die: (name: string) => held.get(name)?.()
  }
}
