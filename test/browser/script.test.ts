import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { CommandFunction } from '../../src/index'
import { ENDPOINT, network, resetPage } from '../support/helpers'
import { quietConsole } from '../support/console'
import { installStub, runScriptTag } from '../support/script-tags'

const global = window as unknown as { discoveryFeedback?: any }

/** Runs the tracker's script tag with these data-* attributes; its command function. */
async function loadScript(dataset: Record<string, string> = {}) {
  await runScriptTag('tracker', dataset)
  return global.discoveryFeedback as CommandFunction
}

beforeEach(() => {
  resetPage()
  delete global.discoveryFeedback
  vi.useFakeTimers()
})
afterEach(() => {
  global.discoveryFeedback?.tracker?.destroy()
  delete global.discoveryFeedback
  delete (window as any).discoveryFeedbackDeclarative
  vi.useRealTimers()
  vi.restoreAllMocks()
})

describe('script tag', () => {
  it('creates the tracker from its data attributes and replays queued calls in order', async () => {
    const beacons = network()
    installStub()
    global.discoveryFeedback('click-suggestion', { rid: 'a-1', suggestion: 'shoes' })
    global.discoveryFeedback('user', { email: 'shopper@example.com' })
    global.discoveryFeedback('click-item', { rid: 'a-1', item_id: '42', variant_item_id: '421' })
    const discoveryFeedback = await loadScript({ key: 'KEY', endpoint: ENDPOINT, autoViewPage: 'false', flushInterval: '5000' })
    discoveryFeedback('redirect', { rid: 'a-2', suggestion: 'sale' })
    vi.advanceTimersByTime(4999)
    expect(beacons.fetch).not.toHaveBeenCalled() // data-flush-interval arrived as a number
    discoveryFeedback('flush')
    const events = beacons.events()
    expect(events.map((event) => event.event)).toEqual(['click-suggestion', 'click-item', 'redirect'])
    expect(events[0].user).not.toHaveProperty('email')
    expect(events[1].user.email).toBe('shopper@example.com')
    expect(events.every((event) => event.key == 'KEY')).toBe(true)
    expect(discoveryFeedback.tracker!.user.uid).toBe(events[0].user.uid)
    expect(typeof discoveryFeedback.createTracker).toBe('function')
  })

  it('keeps a key that looks like a number as text', async () => {
    const beacons = network()
    installStub()
    const discoveryFeedback = await loadScript({ key: '12345', endpoint: ENDPOINT, autoViewPage: 'false' })
    discoveryFeedback('click-item', { item_id: '42', variant_item_id: '421' })
    discoveryFeedback('flush')
    expect(beacons.events().map((event) => event.key)).toEqual(['12345'])
  })

  it('waits for a queued init when there are no data attributes', async () => {
    const beacons = network()
    installStub()
    global.discoveryFeedback('click-item', { item_id: '1', variant_item_id: '1' })
    global.discoveryFeedback('init', { key: 'KEY', endpoint: ENDPOINT, autoViewPage: false })
    const discoveryFeedback = await loadScript()
    discoveryFeedback('flush')
    expect(beacons.events().map((event) => event.properties)).toEqual([{ item_id: '1', variant_item_id: '1' }])
  })

  it('reports bad calls on the console and never throws into the page', async () => {
    network()
    const consoleError = quietConsole()
    installStub()
    global.discoveryFeedback('nope', {})
    const discoveryFeedback = (await loadScript({ key: 'KEY', endpoint: ENDPOINT, autoViewPage: 'false', strict: 'true' })) as any
    expect(() => {
      discoveryFeedback('purchase', null)
      discoveryFeedback('init', { key: 'other', endpoint: ENDPOINT })
      discoveryFeedback()
    }).not.toThrow()
    const messages = consoleError.mock.calls.map((call) => String(call[0]))
    expect(messages[0]).toContain('nope')
    expect(messages[1]).toContain('purchase: properties must be an object')
    expect(messages[2]).toBe('discovery-feedback: init: a tracker already exists on this page')
  })

  it("returns flush's promise, so a page can wait for its events before it navigates", async () => {
    const net = network()
    const discoveryFeedback = await loadScript({ key: 'KEY', endpoint: ENDPOINT, autoViewPage: 'false' })
    discoveryFeedback('click-item', { item_id: '42', variant_item_id: '421' })
    const flushed = discoveryFeedback('flush') as unknown
    expect(flushed).toBeInstanceOf(Promise)
    await flushed
    expect(net.events()).toHaveLength(1)
  })

  it('replays every queued call for a strict tracker, even after one it refuses', async () => {
    network()
    const consoleError = quietConsole()
    installStub()
    global.discoveryFeedback('click-item', { item_id: 42 })
    global.discoveryFeedback('click-item', { item_id: '1', variant_item_id: '1' })
    global.discoveryFeedback('init', { key: 'KEY', endpoint: ENDPOINT, autoViewPage: false, strict: true })
    const discoveryFeedback = await loadScript()
    expect(discoveryFeedback.tracker!.stats()).toMatchObject({ queued: 1, dropped: { invalid: 1 } })
    expect(String(consoleError.mock.calls[0][0])).toContain('click-item: item_id must be a non-empty string')
  })

  it('installs itself over a clashing global, and a second copy leaves the first in charge', async () => {
    network()
    global.discoveryFeedback = 42
    const first = await loadScript({ key: 'KEY', endpoint: ENDPOINT, autoViewPage: 'false' })
    expect(typeof first).toBe('function')
    expect(first.tracker).toBeDefined()
    const second = await loadScript({ key: 'KEY', endpoint: ENDPOINT, autoViewPage: 'false' })
    expect(second).toBe(first)
  })

  it('the declarative add-on queues clicks until the tracker loads, then sends through it, once', async () => {
    const beacons = network()
    document.body.innerHTML = '<a id="tile" data-df-item-id="42" data-df-variant-id="421" data-df-rid="s-1"><b>Shoe</b></a>'
    const loadAddOn = async () => {
      vi.resetModules()
      await import('../../src/script-tags/declarative')
    }
    await loadAddOn()
    document.querySelector('b')!.click()
    expect(global.discoveryFeedback.q).toHaveLength(1)
    const discoveryFeedback = await loadScript({ key: 'KEY', endpoint: ENDPOINT, autoViewPage: 'false' })
    await loadAddOn() // a second copy must not double the clicks
    document.querySelector('b')!.click()
    discoveryFeedback('flush')
    expect(beacons.events().map((event) => [event.event, event.properties])).toEqual([
      ['click-item', { item_id: '42', variant_item_id: '421', rid: 's-1' }],
      ['click-item', { item_id: '42', variant_item_id: '421', rid: 's-1' }]
    ])
  })
})
