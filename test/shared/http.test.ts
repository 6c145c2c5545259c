import { afterEach, describe, expect, it, vi } from 'vitest'
import { createBackoff, verdictOf, retryAfterMs, withSendTime } from '../../src/shared/http'

afterEach(() => {
  vi.useRealTimers()
})

describe('the HTTP policy both senders follow', () => {
  it('reads a status as delivered, refused for good, or worth a retry', () => {
    expect([200, 204, 299].map(verdictOf)).toEqual(['delivered', 'delivered', 'delivered'])
    expect([400, 401, 403, 404, 413, 499].map(verdictOf)).toEqual(Array(6).fill('rejected'))
    expect([0, 408, 429, 500, 503, 302].map(verdictOf)).toEqual(Array(6).fill('retry'))
  })

  it('reads Retry-After in seconds or as a date, and nothing else', () => {
    const now = Date.parse('2026-11-25T12:00:00Z')
    expect(retryAfterMs('2', now)).toBe(2000)
    expect(retryAfterMs('Wed, 25 Nov 2026 12:00:30 GMT', now)).toBe(30000)
    expect(retryAfterMs('soon', now)).toBeNaN()
    expect(retryAfterMs('-1', now)).toBeNaN()
    expect(retryAfterMs(null, now)).toBeNaN()
  })

  it('adds the send time to the URL, after a query the endpoint may have', () => {
    vi.useFakeTimers({ now: 5 })
    expect(withSendTime('https://c.example/v3/feedback')).toBe('https://c.example/v3/feedback?t_sent=5')
    expect(withSendTime('https://c.example/v3/feedback?a=1')).toBe('https://c.example/v3/feedback?a=1&t_sent=5')
  })

  it('probes with one request after a failure and widens once one succeeds; a sender may start probing', () => {
    const trusting = createBackoff(false)
    expect(trusting.slots(6)).toBe(6)
    trusting.failed(trusting.step(), '0')
    expect(trusting.slots(6)).toBe(1)
    trusting.answered()
    expect(trusting.slots(6)).toBe(6)
    expect(createBackoff(true).slots(4)).toBe(1)
  })

  it('counts the requests of one step that fail together as one failure', () => {
    vi.useFakeTimers({ now: 0 })
    vi.spyOn(Math, 'random').mockReturnValue(0.999)
    const backoff = createBackoff(false)
    const step = backoff.step()
    for (let i = 0; i < 6; i++) backoff.failed(step, null)
    // One failure: the first step, about a second.
    expect(backoff.resumeAt()).toBeLessThanOrEqual(1000)
    backoff.failed(backoff.step(), null)
    expect(backoff.resumeAt()).toBeGreaterThan(1000)
  })

  it('waits at least the first step for a request that failed after the count was reset', () => {
    vi.useFakeTimers({ now: 0 })
    vi.spyOn(Math, 'random').mockReturnValue(0)
    const backoff = createBackoff(false)
    const early = backoff.step()
    backoff.failed(early, null)
    const later = backoff.step()
    // Back online: the count starts again, then the request of the earlier step fails.
    backoff.reset()
    backoff.failed(later, null)
    expect(backoff.resumeAt()).toBeGreaterThanOrEqual(500)
  })
})
