import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { tcfConsent } from '../../../src/integrations/consent/tcf'
import type { Consent } from '../../../src/integrations/consent/types'

const fakeTracker = () => {
  const calls: Consent[] = []
  return { calls, consent: (state: Consent) => void calls.push(state) }
}

type Listener = (data: object, success: boolean) => void

/**
 * A hand-written CMP API, as CMP API v2 describes it: addEventListener calls back at once with
 * the current data and the listener's id, and again on every change; removeEventListener by id.
 */
const fakeCmp = () => {
  const listeners = new Map<number, Listener>()
  let next = 1
  let current: object = { eventStatus: 'loading' as string, cmpStatus: 'loading' }
  const removed: number[] = []
  const tcfapi = (command: string, version: number, callback: Listener, parameter?: unknown) => {
    if (version != 2) return callback({}, false)
    if (command == 'addEventListener') {
      const id = next++
      listeners.set(id, callback)
      callback({ ...current, listenerId: id }, true)
    } else if (command == 'removeEventListener') {
      removed.push(parameter as number)
      callback({}, listeners.delete(parameter as number))
    }
  }
  return {
    tcfapi,
    listeners,
    removed,
    emit(data: object) {
      current = data
      for (const [id, callback] of listeners) callback({ ...data, listenerId: id }, true)
    }
  }
}

const consents = (ids: number[]) => Object.fromEntries(ids.map((id) => [id, true]))
const tcData = (status: string, purposes: number[], extra: object = {}) => ({
  gdprApplies: true,
  eventStatus: status,
  cmpStatus: 'loaded',
  tcString: 'C…',
  purpose: { consents: consents(purposes), legitimateInterests: {} },
  vendor: { consents: {}, legitimateInterests: {} },
  publisher: { consents: {}, legitimateInterests: {} },
  ...extra
})

const page = window as Window & { __tcfapi?: unknown }
beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  delete page.__tcfapi
  vi.useRealTimers()
})

describe('tcfConsent', () => {
  it('is pending at once and through loading and cmpuishown, then grants on useractioncomplete with purposes 1 and 8', () => {
    const cmp = fakeCmp()
    page.__tcfapi = cmp.tcfapi
    const tracker = fakeTracker()
    tcfConsent(tracker)
    expect(tracker.calls).toEqual(['pending'])
    // The UI is showing: every consent reads false by definition, which is no answer yet.
    cmp.emit(tcData('cmpuishown', []))
    expect(tracker.calls).toEqual(['pending'])
    cmp.emit(tcData('useractioncomplete', [1, 8]))
    expect(tracker.calls).toEqual(['pending', 'granted'])
  })

  it('denies when a required purpose lacks consent, and follows a later change both ways', () => {
    const cmp = fakeCmp()
    page.__tcfapi = cmp.tcfapi
    const tracker = fakeTracker()
    tcfConsent(tracker)
    cmp.emit(tcData('tcloaded', [1, 2, 3, 4, 7]))
    expect(tracker.calls).toEqual(['pending', 'denied'])
    cmp.emit(tcData('cmpuishown', []))
    cmp.emit(tcData('useractioncomplete', [1, 8]))
    cmp.emit(tcData('cmpuishown', []))
    cmp.emit(tcData('useractioncomplete', [8]))
    expect(tracker.calls).toEqual(['pending', 'denied', 'granted', 'denied'])
  })

  it('reads a stored choice (tcloaded) given at registration', () => {
    const cmp = fakeCmp()
    cmp.emit(tcData('tcloaded', [1, 8, 9]))
    page.__tcfapi = cmp.tcfapi
    const tracker = fakeTracker()
    tcfConsent(tracker)
    expect(tracker.calls).toEqual(['pending', 'granted'])
  })

  it('grants where GDPR does not apply, and waits while gdprApplies is undefined', () => {
    const cmp = fakeCmp()
    page.__tcfapi = cmp.tcfapi
    const tracker = fakeTracker()
    tcfConsent(tracker)
    cmp.emit({ eventStatus: 'tcloaded', cmpStatus: 'loaded' })
    expect(tracker.calls).toEqual(['pending'])
    // CMP API v2: outside GDPR only these fields are present, eventStatus among the missing.
    cmp.emit({ gdprApplies: false, tcfPolicyVersion: 5, cmpId: 10, cmpVersion: 1 })
    expect(tracker.calls).toEqual(['pending', 'granted'])
  })

  it('takes the purposes, the vendor and the publisher segment from options', () => {
    const cmp = fakeCmp()
    page.__tcfapi = cmp.tcfapi
    const withVendor = fakeTracker()
    const withFive = fakeTracker()
    const fromPublisher = fakeTracker()
    tcfConsent(withVendor, { vendorId: 755 })
    tcfConsent(withFive, { purposes: [1, 5, 6, 8] })
    tcfConsent(fromPublisher, { source: 'publisher' })
    cmp.emit(tcData('useractioncomplete', [1, 8], { publisher: { consents: consents([1, 8]) } }))
    expect(withVendor.calls).toEqual(['pending', 'denied'])
    expect(withFive.calls).toEqual(['pending', 'denied'])
    expect(fromPublisher.calls).toEqual(['pending', 'granted'])
    cmp.emit(tcData('useractioncomplete', [1, 5, 6, 8], { vendor: { consents: { 755: true } }, publisher: { consents: {} } }))
    expect(withVendor.calls).toEqual(['pending', 'denied', 'granted'])
    expect(withFive.calls).toEqual(['pending', 'denied', 'granted'])
    expect(fromPublisher.calls).toEqual(['pending', 'granted', 'denied'])
  })

  it('does not require purpose 1 when purposeOneTreatment says it was not disclosed', () => {
    const cmp = fakeCmp()
    page.__tcfapi = cmp.tcfapi
    const tracker = fakeTracker()
    tcfConsent(tracker)
    cmp.emit(tcData('useractioncomplete', [8], { purposeOneTreatment: true }))
    expect(tracker.calls).toEqual(['pending', 'granted'])
  })

  it('never grants with nothing consented: purpose 1 stays required when it is the only one, and on request', () => {
    const cmp = fakeCmp()
    page.__tcfapi = cmp.tcfapi
    const onlyOne = fakeTracker()
    const requiring = fakeTracker()
    tcfConsent(onlyOne, { purposes: [1] })
    tcfConsent(requiring, { requirePurposeOne: true })
    // "Reject all" under purposeOneTreatment: purpose 1 was not disclosed, nothing consented.
    cmp.emit(tcData('useractioncomplete', [], { purposeOneTreatment: true }))
    expect(onlyOne.calls).toEqual(['pending', 'denied'])
    expect(requiring.calls).toEqual(['pending', 'denied'])
    cmp.emit(tcData('useractioncomplete', [8], { purposeOneTreatment: true }))
    expect(requiring.calls).toEqual(['pending', 'denied'])
  })

  it('takes the default purposes instead of an empty or malformed list, and says so in the console', () => {
    const error = vi.spyOn(console, 'error').mockImplementation(() => {})
    const cmp = fakeCmp()
    page.__tcfapi = cmp.tcfapi
    const empty = fakeTracker()
    const text = fakeTracker()
    tcfConsent(empty, { purposes: [] })
    tcfConsent(text, { purposes: ['1', '8'] as never })
    expect(error.mock.calls.map(([message]) => message)).toEqual([
      'discovery-feedback: tcfConsent: purposes must be a non-empty array of TCF purpose ids (1 to 11), got array: [1, 8] are required instead',
      'discovery-feedback: tcfConsent: purposes must be a non-empty array of TCF purpose ids (1 to 11), got array: [1, 8] are required instead'
    ])
    cmp.emit(tcData('useractioncomplete', []))
    expect(empty.calls).toEqual(['pending', 'denied'])
    cmp.emit(tcData('useractioncomplete', [1, 8]))
    expect(text.calls).toEqual(['pending', 'denied', 'granted'])
    error.mockRestore()
  })

  it('denies the vendor a purpose the publisher restricted: not allowed (0), or on legitimate interest only (2)', () => {
    const cmp = fakeCmp()
    page.__tcfapi = cmp.tcfapi
    const tracker = fakeTracker()
    tcfConsent(tracker, { vendorId: 42 })
    const consented = { vendor: { consents: { 42: true } } }
    cmp.emit(tcData('useractioncomplete', [1, 8], { ...consented, publisher: { consents: {}, restrictions: { 8: { 42: 0 } } } }))
    expect(tracker.calls).toEqual(['pending', 'denied'])
    cmp.emit(tcData('useractioncomplete', [1, 8], { ...consented, publisher: { consents: {}, restrictions: { 1: { 42: 1 }, 8: { 7: 0 } } } }))
    expect(tracker.calls).toEqual(['pending', 'denied', 'granted'])
    cmp.emit(tcData('useractioncomplete', [1, 8], { ...consented, publisher: { consents: {}, restrictions: { 1: { 42: 2 } } } }))
    expect(tracker.calls).toEqual(['pending', 'denied', 'granted', 'denied'])
  })

  it('waits for a CMP that loads later, and gives up after the timeout, still pending', () => {
    const tracker = fakeTracker()
    tcfConsent(tracker, { timeout: 1000 })
    vi.advanceTimersByTime(300)
    const cmp = fakeCmp()
    page.__tcfapi = cmp.tcfapi
    vi.advanceTimersByTime(60)
    expect(cmp.listeners.size).toBe(1)
    cmp.emit(tcData('tcloaded', [1, 8]))
    expect(tracker.calls).toEqual(['pending', 'granted'])

    delete page.__tcfapi
    const late = fakeTracker()
    tcfConsent(late, { timeout: 1000 })
    vi.advanceTimersByTime(1100)
    const tooLate = fakeCmp()
    page.__tcfapi = tooLate.tcfapi
    vi.advanceTimersByTime(1000)
    expect(tooLate.listeners.size).toBe(0)
    expect(late.calls).toEqual(['pending'])
  })

  it('goes through a stub that queues calls until the CMP loads', () => {
    const queue: unknown[][] = []
    page.__tcfapi = (...args: unknown[]) => void queue.push(args)
    const tracker = fakeTracker()
    tcfConsent(tracker)
    expect(queue).toHaveLength(1)
    const cmp = fakeCmp()
    page.__tcfapi = cmp.tcfapi
    for (const args of queue) cmp.tcfapi(...(args as Parameters<typeof cmp.tcfapi>))
    cmp.emit(tcData('useractioncomplete', [1, 8]))
    expect(tracker.calls).toEqual(['pending', 'granted'])
  })

  it('stop removes its listener by id and ignores what comes after', () => {
    const cmp = fakeCmp()
    page.__tcfapi = cmp.tcfapi
    const tracker = fakeTracker()
    const stop = tcfConsent(tracker)
    stop()
    expect(cmp.removed).toEqual([1])
    expect(cmp.listeners.size).toBe(0)
    cmp.emit(tcData('useractioncomplete', [1, 8]))
    expect(tracker.calls).toEqual(['pending'])
  })

  it('stop before the CMP has answered removes the listener once its id comes; stop while polling ends the polling', () => {
    let answer: (() => void) | undefined
    const cmp = fakeCmp()
    page.__tcfapi = (...args: Parameters<typeof cmp.tcfapi>) => {
      answer = () => cmp.tcfapi(...args)
      if (args[0] == 'removeEventListener') answer()
    }
    const tracker = fakeTracker()
    tcfConsent(tracker)()
    answer!()
    expect(cmp.removed).toEqual([1])
    expect(cmp.listeners.size).toBe(0)

    delete page.__tcfapi
    const polling = fakeTracker()
    tcfConsent(polling)()
    const later = fakeCmp()
    page.__tcfapi = later.tcfapi
    vi.advanceTimersByTime(500)
    expect(later.listeners.size).toBe(0)
  })

  it('never throws into the page when the CMP throws', () => {
    page.__tcfapi = () => {
      throw new Error('broken CMP')
    }
    const tracker = fakeTracker()
    expect(() => tcfConsent(tracker)()).not.toThrow()
    expect(tracker.calls).toEqual(['pending'])
  })
})
