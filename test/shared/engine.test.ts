// @vitest-environment node
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createEngine, type EngineRequest, type Queued } from '../../src/shared/engine'
import { createMemoryStore } from '../../src/shared/memory-store'

type Entry = Queued & { name: string }

/**
 * An engine over a memory store whose transport makes one request per entry (an entry named
 * 'huge…' is too large for any) and answers only when the test says: `answer(status)` answers
 * the oldest request still open.
 */
function harness(options: { most?: number; probeFirst?: boolean; interval?: number; batch?: number } = {}) {
  const store = createMemoryStore<Entry>()
  const open: { request: EngineRequest<Entry>; resolve: (status: number) => void }[] = []
  const posted: string[][] = []
  const drop = vi.fn()
  const engine = createEngine<Entry, EngineRequest<Entry>>(store, {
    take(waiting, most, oversized) {
      waiting.filter((entry) => entry.name.startsWith('huge')).forEach(oversized)
      return waiting
        .filter((entry) => !entry.name.startsWith('huge'))
        .slice(0, most)
        .map((entry) => ({ body: entry.name, entries: [entry], bytes: entry.name.length }))
    },
    post(request) {
      posted.push(request.entries.map((entry) => entry.name))
      return new Promise((resolve) => open.push({ request, resolve: (status) => resolve({ status }) }))
    },
    most: options.most ?? 3,
    interval: options.interval ?? 1000,
    batch: options.batch,
    probeFirst: options.probeFirst,
    drop
  })
  const add = (...names: string[]) => {
    for (const name of names) {
      store.add({ name, event: { t_client: Date.now() } })
      engine.queued()
    }
  }
  /** Answers the oldest open request, and lets the engine act on it. */
  const answer = async (status: number) => {
    open.shift()!.resolve(status)
    await vi.advanceTimersByTimeAsync(0)
  }
  return { store, engine, open, posted, drop, counts: () => engine.stats(), add, answer }
}

beforeEach(() => {
  vi.useFakeTimers()
  vi.spyOn(Math, 'random').mockReturnValue(1)
})
afterEach(() => {
  vi.useRealTimers()
  vi.restoreAllMocks()
})

describe('the sender engine', () => {
  it('sends after the interval, or at once when a batch is full', async () => {
    const { add, posted } = harness({ batch: 3, most: 5 })
    add('a')
    await vi.advanceTimersByTimeAsync(999)
    expect(posted).toEqual([])
    await vi.advanceTimersByTimeAsync(1)
    expect(posted).toEqual([['a']])
    add('b', 'c')
    await vi.advanceTimersByTimeAsync(0)
    expect(posted).toHaveLength(1)
    add('d')
    await vi.advanceTimersByTimeAsync(0)
    expect(posted.flat()).toEqual(['a', 'b', 'c', 'd'])
  })

  it('keeps at most `most` requests in flight; each answer frees one', async () => {
    const { add, engine, open, answer, posted } = harness({ most: 3 })
    add('a', 'b', 'c', 'd', 'e')
    engine.send()
    expect(open).toHaveLength(3)
    await answer(204)
    // The answer plans the next send for when it is due; flush() would send at once.
    await vi.advanceTimersByTimeAsync(1000)
    expect(open).toHaveLength(3)
    expect(posted.flat()).toEqual(['a', 'b', 'c', 'd', 'e'].slice(0, 4))
  })

  it('after a failure probes with one request at a time, waiting longer each time, then sends up to `most` again', async () => {
    const { add, engine, open, answer, posted, counts } = harness({ most: 3 })
    add('a', 'b', 'c', 'd', 'e')
    engine.send()
    await answer(503)
    await answer(503)
    await answer(503)
    // The three failed in one step: one wait of a second (jitter at its most), then one probe.
    await vi.advanceTimersByTimeAsync(999)
    expect(posted).toHaveLength(3)
    await vi.advanceTimersByTimeAsync(1)
    expect(open).toHaveLength(1)
    // The probe fails too: two seconds, still one at a time.
    await answer(503)
    await vi.advanceTimersByTimeAsync(1999)
    expect(posted).toHaveLength(4)
    await vi.advanceTimersByTimeAsync(1)
    expect(open).toHaveLength(1)
    expect(counts().retried).toBe(4)
    // The collector answers: the rest goes, three at a time.
    await answer(204)
    await vi.advanceTimersByTimeAsync(1000)
    expect(open).toHaveLength(3)
  })

  it('probes from the start with probeFirst, before anything is known', () => {
    const { add, engine, open } = harness({ most: 3, probeFirst: true })
    add('a', 'b', 'c')
    engine.send()
    expect(open).toHaveLength(1)
  })

  it('flush() resolves once every request was answered, or once one failed', async () => {
    const { add, engine, answer, counts, store } = harness({ most: 2 })
    add('a', 'b', 'c')
    let flushed = false
    engine.flush().then(() => (flushed = true))
    await answer(204)
    expect(flushed).toBe(false)
    await answer(204)
    expect(flushed).toBe(false)
    await answer(204)
    expect(flushed).toBe(true)
    expect(counts().sent).toBe(3)
    add('d')
    flushed = false
    engine.flush().then(() => (flushed = true))
    await answer(500)
    expect(flushed).toBe(true)
    expect(store.entries.map((entry) => entry.name)).toEqual(['d'])
  })

  it('drops a refused request as rejected and a too large entry as too_large; keeps it on 408, 429 and 5xx', async () => {
    const { add, engine, answer, drop, store } = harness({ most: 5 })
    add('refused', 'timeout', 'limited', 'failed')
    engine.send()
    await answer(400)
    await answer(408)
    await answer(429)
    await answer(502)
    expect(drop).toHaveBeenCalledTimes(1)
    expect(drop).toHaveBeenCalledWith([expect.objectContaining({ name: 'refused' })], 'rejected', 'the collector answered 400', undefined)
    expect(store.entries.map((entry) => entry.name)).toEqual(['timeout', 'limited', 'failed'])
    // Too large for any request: dropped by the engine when a request would take it, and gone.
    add('huge')
    engine.wake()
    expect(drop).toHaveBeenLastCalledWith([expect.objectContaining({ name: 'huge' })], 'too_large')
    expect(store.entries.map((entry) => entry.name)).not.toContain('huge')
  })
})
