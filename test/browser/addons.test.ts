import { afterEach, describe, expect, it, vi } from 'vitest'
import type { Addon, CommandFunction, FeedbackError, Outcome } from '../../src/index'
import { ENDPOINT, isolateEachTest, make, network, setVisibility } from '../support/helpers'
import { quietConsole } from '../support/console'
import { installStub, runScriptTag } from '../support/script-tags'

// The contract of tracker.use(addon), docs/guide/extending.md.

const click = { rid: 's-1', item_id: '42', variant_item_id: '421' }

isolateEachTest()

/** An add-on that writes down every hook it hears, under its name, in one log shared by several. */
function recorder(name: string, log: string[]): Addon {
  return {
    event: (event) => void log.push(name + ' event ' + event),
    outcome: ({ event, error }) => void log.push(name + ' outcome ' + event + (error ? ': ' + error.message : '')),
    view: (url) => void log.push(name + ' view ' + url?.replace(location.origin, '')),
    consent: (state) => void log.push(name + ' consent ' + state)
  }
}

/** What onError heard. */
function errorsOf() {
  const errors: FeedbackError[] = []
  return { errors, onError: (error: FeedbackError) => void errors.push(error) }
}

/** An add-on that hears only outcomes, in a list. */
function outcomes() {
  const heard: Outcome[] = []
  return { heard, addon: { outcome: (outcome: Outcome) => void heard.push(outcome) } satisfies Addon }
}

describe('add-ons in order', () => {
  it('the second add-on sees what the first changed, and what is recorded is the last change', () => {
    const net = network()
    const tracker = make()
    const seen: unknown[] = []
    tracker.use({ event: (_, properties) => ({ ...(properties as object), rid: 'r-first' }) })
    tracker.use({
      event(_, properties) {
        seen.push(properties)
        return { ...(properties as object), item_id: '43' }
      }
    })
    tracker.clickItem({ item_id: '42', variant_item_id: '421' } as never)
    tracker.flush()
    expect(seen).toEqual([{ item_id: '42', variant_item_id: '421', rid: 'r-first' }])
    expect(net.events().map((event) => event.properties)).toEqual([{ item_id: '43', variant_item_id: '421', rid: 'r-first' }])
  })

  it('each hook is called in the order the add-ons were added; an add-on that returns nothing leaves the event', () => {
    const net = network()
    const tracker = make({ consent: 'pending' })
    const log: string[] = []
    tracker.use(recorder('first', log))
    tracker.use(recorder('second', log))
    tracker.consent('granted')
    tracker.viewPage({})
    tracker.clickItem(click)
    tracker.flush()
    expect(log).toEqual([
      'first view undefined',
      'first consent pending',
      'second view undefined',
      'second consent pending',
      'first consent granted',
      'second consent granted',
      'first event view-page',
      'second event view-page',
      'first outcome view-page',
      'second outcome view-page',
      'first view /',
      'second view /',
      'first event click-item',
      'second event click-item',
      'first outcome click-item',
      'second outcome click-item'
    ])
    expect(net.events().map((event) => event.properties)[1]).toEqual(click)
  })

  it("never changes the caller's object: an add-on gets it, and the tracker records what the add-on returns", () => {
    const net = network()
    const tracker = make()
    tracker.use({ event: (_, properties) => ({ ...(properties as object), rid: 'r-2' }) })
    const properties = Object.freeze({ ...click })
    tracker.clickItem(properties)
    tracker.flush()
    expect(properties).toEqual(click)
    expect(net.events()[0].properties.rid).toBe('r-2')
  })
})

describe('an add-on that throws', () => {
  const hooks = ['event', 'outcome', 'view', 'consent'] as const
  for (const hook of hooks) {
    it(`in its ${hook} hook: the event is recorded as if it were not there, nothing is thrown, onError names it an add-on failure`, () => {
      const net = network()
      const consoleError = quietConsole()
      const { errors, onError } = errorsOf()
      const tracker = make({ onError })
      const log: string[] = []
      const broken: Addon = {
        [hook]: () => {
          throw new Error('boom')
        }
      }
      expect(() => {
        tracker.use(broken)
        tracker.use(recorder('after', log))
        tracker.consent('granted')
        tracker.viewPage({})
        tracker.clickItem(click)
      }).not.toThrow()
      tracker.flush()
      expect(net.events().map((event) => [event.event, event.properties.item_id])).toEqual([
        ['view-page', undefined],
        ['click-item', '42']
      ])
      // The add-on after it heard everything.
      expect(log.filter((line) => line.startsWith('after outcome'))).toEqual(['after outcome view-page', 'after outcome click-item'])
      expect(errors.length).toBeGreaterThan(0)
      for (const error of errors) expect(error).toMatchObject({ name: 'FeedbackError', message: 'discovery-feedback: an add-on failed: Error: boom' })
      expect(consoleError).toHaveBeenCalledWith('discovery-feedback: an add-on failed: Error: boom')
      // Its faults are no refused events.
      expect(tracker.stats().dropped.invalid).toBe(0)
    })
  }
})

describe('removal', () => {
  it('a removed add-on hears nothing more; the others still do', () => {
    network()
    const tracker = make()
    const log: string[] = []
    const remove = tracker.use(recorder('gone', log))
    tracker.use(recorder('kept', log))
    log.length = 0
    remove()
    tracker.consent('pending')
    tracker.viewPage({})
    tracker.clickItem(click)
    expect(log.filter((line) => line.startsWith('gone'))).toEqual([])
    expect(log.filter((line) => line.startsWith('kept'))).toHaveLength(6)
  })

  it('a removed add-on no longer changes or drops events', () => {
    const net = network()
    const tracker = make()
    const remove = tracker.use({ event: () => false })
    remove()
    tracker.clickItem(click)
    tracker.flush()
    expect(net.events()).toHaveLength(1)
  })
})

describe('the outcome of each event', () => {
  it('taken: no error, and the properties as recorded', () => {
    network()
    const tracker = make()
    const { heard, addon } = outcomes()
    tracker.use(addon)
    tracker.clickItem(click)
    expect(heard).toEqual([{ event: 'click-item', properties: click, error: undefined }])
  })

  it('invalid: the error names the event, the field and the rule, as onError hears it', () => {
    network()
    quietConsole()
    const { errors, onError } = errorsOf()
    const tracker = make({ onError })
    const { heard, addon } = outcomes()
    tracker.use(addon)
    tracker.clickItem({ ...click, item_id: 5 } as never)
    expect(heard).toHaveLength(1)
    expect(heard[0].error).toMatchObject({
      name: 'FeedbackError',
      event: 'click-item',
      field: 'item_id',
      message: 'discovery-feedback: click-item: item_id must be a non-empty string, got 5'
    })
    expect(errors).toEqual([heard[0].error])
  })

  it('consent denied: refused, and says so', () => {
    const net = network()
    const tracker = make({ consent: 'denied' })
    const { heard, addon } = outcomes()
    tracker.use(addon)
    tracker.clickItem(click)
    tracker.flush()
    expect(heard[0].error?.message).toBe('discovery-feedback: click-item: not tracked: consent denied')
    expect(net.events()).toEqual([])
  })

  it('dropped by another add-on: the add-ons after it hear the refusal, never the event', () => {
    const net = network()
    const tracker = make()
    const log: string[] = []
    tracker.use({ event: (event) => (event == 'click-item' ? false : undefined) })
    tracker.use(recorder('after', log))
    log.length = 0
    tracker.clickItem(click)
    tracker.clickSuggestion({ rid: 'a-1', suggestion: 'shoes' })
    tracker.flush()
    expect(log).toEqual([
      'after outcome click-item: discovery-feedback: click-item: dropped by an add-on',
      'after event click-suggestion',
      'after outcome click-suggestion'
    ])
    expect(net.events().map((event) => event.event)).toEqual(['click-suggestion'])
  })

  it('too large for a request: refused, and says so', () => {
    network()
    quietConsole()
    const tracker = make()
    const { heard, addon } = outcomes()
    tracker.use(addon)
    tracker.clickSuggestion({ rid: 'a-1', suggestion: 'x'.repeat(1 << 20) })
    expect(heard[0].error?.message).toBe('discovery-feedback: click-suggestion: event dropped: too large for a request')
  })
})

describe('view and consent', () => {
  it('view: told at once, at each view-page taken (the automatic ones too), and undefined after a back/forward-cache restore', () => {
    network()
    const tracker = make({ autoViewPage: true })
    const urls: (string | undefined)[] = []
    tracker.use({ view: (url) => void urls.push(url?.replace(location.origin, '')) })
    vi.advanceTimersByTime(0)
    history.pushState(null, '', '/a')
    vi.advanceTimersByTime(0)
    tracker.viewPage({ url: location.origin + '/b' })
    dispatchEvent(new PageTransitionEvent('pageshow', { persisted: true }))
    vi.advanceTimersByTime(0)
    expect(urls).toEqual([undefined, '/', '/a', '/b', undefined, '/a'])
    // One added later hears the view counted last.
    const later: (string | undefined)[] = []
    tracker.use({ view: (url) => void later.push(url?.replace(location.origin, '')) })
    expect(later).toEqual(['/a'])
    setVisibility('hidden')
  })

  it('an outcome an add-on writes into changes nothing for the tracker or the add-ons after it', () => {
    network()
    const tracker = make({ autoViewPage: false })
    const heard: Outcome[] = []
    const urls: (string | undefined)[] = []
    tracker.use({ outcome: (outcome) => void ((outcome as { error?: unknown }).error = new Error('written by an add-on')) })
    tracker.use({ outcome: (outcome) => void heard.push(outcome), view: (url) => void urls.push(url?.replace(location.origin, '')) })
    tracker.viewPage({})
    expect(heard.map((outcome) => outcome.error)).toEqual([undefined])
    expect(urls).toEqual([undefined, '/'])
  })

  it('a view-page refused is not the view counted last', () => {
    network()
    quietConsole()
    const tracker = make()
    const urls: (string | undefined)[] = []
    tracker.viewPage({})
    tracker.use({ view: (url) => void urls.push(url?.replace(location.origin, '')) })
    tracker.viewPage({ url: 5 } as never)
    tracker.consent('denied')
    tracker.viewPage({ url: location.origin + '/c' })
    expect(urls).toEqual(['/'])
  })

  it('consent: told at once, and at each consent() call', () => {
    network()
    const tracker = make({ consent: 'pending' })
    const states: string[] = []
    tracker.use({ consent: (state) => void states.push(state) })
    tracker.consent('granted')
    tracker.consent('denied')
    expect(states).toEqual(['pending', 'granted', 'denied'])
  })
})

describe('use() with something that is no add-on', () => {
  it('is refused with a FeedbackError, reported and not thrown; a strict tracker throws it', () => {
    network()
    quietConsole()
    const { errors, onError } = errorsOf()
    const tracker = make({ onError })
    for (const value of [null, undefined, 'addon', 42]) expect(tracker.use(value as never)).toBeUndefined()
    expect(errors).toHaveLength(4)
    for (const error of errors)
      expect(error).toMatchObject({ name: 'FeedbackError', event: 'use', field: 'addon', message: 'discovery-feedback: use: addon must be an object' })
    const strict = make({ strict: true })
    expect(() => strict.use(null as never)).toThrow('discovery-feedback: use: addon must be an object')
  })
})

describe("the script tag's 'use' command", () => {
  const global = window as unknown as { discoveryFeedback?: any }
  afterEach(() => {
    global.discoveryFeedback?.tracker?.destroy()
    delete global.discoveryFeedback
  })

  it('is replayed before the events the page queued earlier, so the add-on hears and changes them', async () => {
    const net = network()
    installStub()
    global.discoveryFeedback('click-item', { item_id: '42', variant_item_id: '421' })
    global.discoveryFeedback('click-suggestion', { rid: 'a-1', suggestion: 'shoes' })
    const log: string[] = []
    global.discoveryFeedback('use', {
      ...recorder('tag', log),
      event: (event: string, properties: object) => {
        log.push('tag event ' + event)
        return event == 'click-item' ? { ...properties, rid: 'r-tag' } : undefined
      }
    })
    await runScriptTag('tracker', { key: 'KEY', endpoint: ENDPOINT, autoViewPage: 'false' })
    const discoveryFeedback = global.discoveryFeedback as CommandFunction
    discoveryFeedback('flush')
    expect(log).toEqual([
      'tag view undefined',
      'tag consent granted',
      'tag event click-item',
      'tag outcome click-item',
      'tag event click-suggestion',
      'tag outcome click-suggestion'
    ])
    expect(net.events().map((event) => [event.event, event.properties.rid])).toEqual([
      ['click-item', 'r-tag'],
      ['click-suggestion', 'a-1']
    ])
  })

  it("is replayed first too when the calls wait for a later 'init'", async () => {
    const net = network()
    await runScriptTag('tracker')
    const log: string[] = []
    global.discoveryFeedback('click-item', { item_id: '42', variant_item_id: '421' })
    global.discoveryFeedback('use', {
      event(event: string, properties: object) {
        log.push('event ' + event)
        return { ...properties, rid: 'r-tag' }
      }
    })
    global.discoveryFeedback('init', { key: 'KEY', endpoint: ENDPOINT, autoViewPage: false })
    global.discoveryFeedback('flush')
    expect(log).toEqual(['event click-item'])
    expect(net.events().map((event) => event.properties.rid)).toEqual(['r-tag'])
  })

  it('adds an add-on at once once the tracker has loaded', async () => {
    network()
    await runScriptTag('tracker', { key: 'KEY', endpoint: ENDPOINT, autoViewPage: 'false' })
    const log: string[] = []
    global.discoveryFeedback('use', recorder('late', log))
    global.discoveryFeedback('click-item', click)
    expect(log).toEqual(['late view undefined', 'late consent granted', 'late event click-item', 'late outcome click-item'])
  })
})

describe('the click-item that goes along with an add-to-cart', () => {
  const cart = { rid: 's-1', item_id: '42', variant_item_id: '421', quantity: 2 }

  it('goes the way of every event: the add-ons hear it and its outcome, before the add-to-cart', () => {
    const net = network()
    const tracker = make()
    const log: string[] = []
    tracker.use(recorder('addon', log))
    log.splice(0)
    tracker.addToCart(cart)
    tracker.flush()
    expect(log).toEqual(['addon event add-to-cart', 'addon event click-item', 'addon outcome click-item', 'addon outcome add-to-cart'])
    expect(net.events().map((event) => event.event)).toEqual(['click-item', 'add-to-cart'])
  })

  it('an add-on may drop it, and the add-to-cart still goes', () => {
    const net = network()
    const tracker = make()
    const { heard, addon } = outcomes()
    tracker.use({ event: (event) => (event == 'click-item' ? false : undefined) })
    tracker.use(addon)
    tracker.addToCart(cart)
    tracker.flush()
    expect(heard.map(({ event, error }) => event + (error ? ': ' + error.message : ''))).toEqual([
      'click-item: discovery-feedback: click-item: dropped by an add-on',
      'add-to-cart'
    ])
    expect(net.events().map((event) => event.event)).toEqual(['add-to-cart'])
  })
})
