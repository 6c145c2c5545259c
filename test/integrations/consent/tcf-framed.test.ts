import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { Consent } from '../../../src/integrations/consent/types'

/*
 * tcfConsent in a frame whose CMP is in an ancestor frame, with the transport (tcf-frame.ts)
 * replaced by a CMP that answers the way the IAB's stub passes answers across frames: in a later
 * task, and only what the CMP answers during the call itself. The real transport runs in
 * Chromium with the IAB's stub and CMP API (consent-modes.e2e.test.ts); here the question loop's
 * bounds are checked, which a browser test cannot reach in reasonable time.
 */

type Callback = (data: unknown, success: boolean) => void

const cmp = {
  /** Whether the CMP answers addEventListener during the call (false: later, so the stub passes nothing on). */
  answersAtOnce: true,
  /** How long the frame's messages take to come back. */
  delay: 10,
  state: { gdprApplies: true, eventStatus: 'tcloaded', purpose: { consents: {} as Record<number, boolean> } },
  listeners: new Set<number>(),
  nextId: 1,
  closed: 0
}

vi.mock('../../../src/integrations/consent/tcf-frame', () => ({
  framedTcfApi: () => ({
    api(command: string, _version: number, callback: Callback, parameter?: unknown) {
      const later = (data: unknown) => setTimeout(() => callback(data, true), cmp.delay)
      if (command == 'ping') later({ cmpStatus: 'loaded' })
      else if (command == 'addEventListener') {
        const listenerId = cmp.nextId++
        cmp.listeners.add(listenerId)
        if (cmp.answersAtOnce) later({ ...cmp.state, listenerId })
      } else if (command == 'removeEventListener') {
        cmp.listeners.delete(parameter as number)
        later(true)
      }
    },
    close: () => void cmp.closed++
  })
}))

const { tcfConsent } = await import('../../../src/integrations/consent/tcf')

const fakeTracker = () => {
  const calls: Consent[] = []
  return { calls, consent: (state: Consent) => void calls.push(state) }
}

beforeEach(() => {
  vi.useFakeTimers()
  Object.assign(cmp, { answersAtOnce: true, delay: 10, listeners: new Set(), nextId: 1, closed: 0 })
  cmp.state.purpose.consents = {}
})
afterEach(() => {
  vi.useRealTimers()
})

describe('tcfConsent in a frame', () => {
  it('asks once a second and follows the choice both ways, leaving no listener at the CMP', () => {
    const tracker = fakeTracker()
    const stop = tcfConsent(tracker)
    vi.advanceTimersByTime(100)
    expect(tracker.calls).toEqual(['pending', 'denied'])
    cmp.state.purpose.consents = { 1: true, 8: true }
    vi.advanceTimersByTime(1000)
    expect(tracker.calls).toEqual(['pending', 'denied', 'granted'])
    expect(cmp.listeners.size).toBe(0)
    stop()
    expect(cmp.closed).toBe(1)
  })

  it('leaves at most three listeners at a CMP whose answers never come back, then stops asking', () => {
    cmp.answersAtOnce = false
    const tracker = fakeTracker()
    tcfConsent(tracker)
    vi.advanceTimersByTime(60000)
    expect(cmp.nextId - 1).toBe(3)
    expect(tracker.calls).toEqual(['pending'])
  })

  it('stopped while a question is in flight: waits for its answer, removes that listener, then closes', () => {
    cmp.delay = 300
    const tracker = fakeTracker()
    const stop = tcfConsent(tracker)
    // The ping is answered at 300 ms and the question asked; stop comes before its answer.
    vi.advanceTimersByTime(400)
    expect(cmp.listeners.size).toBe(1)
    stop()
    expect(cmp.closed).toBe(0)
    vi.advanceTimersByTime(300)
    expect(cmp.listeners.size).toBe(0)
    expect(cmp.closed).toBe(1)
    expect(tracker.calls).toEqual(['pending'])
    // Nothing more is asked.
    vi.advanceTimersByTime(10000)
    expect(cmp.nextId).toBe(2)
  })

  it('stopped while an unanswerable question is in flight: closes after five seconds all the same', () => {
    cmp.answersAtOnce = false
    const stop = tcfConsent(fakeTracker())
    vi.advanceTimersByTime(100)
    stop()
    vi.advanceTimersByTime(4900)
    expect(cmp.closed).toBe(0)
    vi.advanceTimersByTime(200)
    expect(cmp.closed).toBe(1)
    expect(vi.getTimerCount()).toBe(0)
  })
})
