import { afterEach, describe, expect, it, vi } from 'vitest'
import type { FeedbackError } from '../../src/index'
import { createTracker } from '../../src/browser/tracker'
// @ts-expect-error plain ES module shared with the browser suite
import { fuzz } from '../support/fuzz.mjs'
import { isolateEachTest, make, network, settle, setVisibility, stored } from '../support/helpers'
import { quietConsole } from '../support/console'

const click = { rid: 's-1', item_id: '42', variant_item_id: '421' }
const order = { order_id: 'o-1', currency: 'EUR', revenue: 10, line_items: [{ item_id: '42', variant_item_id: '421', unit_price: 5, quantity: 2 }] }

isolateEachTest()

// What a test adds to the page's built-ins is taken away again, whatever the test's outcome.
const undo: (() => void)[] = []
afterEach(() =>
  undo
    .splice(0)
    .reverse()
    .forEach((step) => step())
)

function define(target: object, name: string, descriptor: PropertyDescriptor) {
  const before = Object.getOwnPropertyDescriptor(target, name)
  Object.defineProperty(target, name, { configurable: true, ...descriptor })
  undo.push(() => (before ? Object.defineProperty(target, name, before) : delete (target as any)[name]))
}

const errorsOf = () => {
  const errors: FeedbackError[] = []
  quietConsole()
  return { errors, onError: (error: FeedbackError) => errors.push(error) }
}

describe('a page that extends the built-in prototypes', () => {
  it('sends every event when Object.prototype has an enumerable property', () => {
    const net = network()
    const { errors, onError } = errorsOf()
    const tracker = make({ onError })
    define(Object.prototype, 'polluted', { value: 'yes', enumerable: true, writable: true })
    tracker.identify({ email: 'shopper@example.com' })
    tracker.clickItem(click)
    tracker.purchase(order)
    tracker.flush()
    expect(errors.map((error) => error.message)).toEqual([])
    const [sent, purchase] = net.events()
    expect(Object.keys(sent.properties)).toEqual(['rid', 'item_id', 'variant_item_id'])
    expect(Object.keys(purchase.properties.line_items[0])).toEqual(['item_id', 'variant_item_id', 'unit_price', 'quantity'])
    expect(tracker.stats().dropped.invalid).toBe(0)
  })

  it("keeps SPEC's arrays arrays when Array.prototype.toJSON is defined (Prototype.js 1.6)", () => {
    const net = network()
    const tracker = make()
    // Prototype.js 1.6 writes arrays as its own JSON text, so JSON.stringify nests a string.
    define(Array.prototype, 'toJSON', {
      value(this: unknown[]) {
        return '[' + this.map((item) => JSON.stringify(item)).join(', ') + ']'
      }
    })
    tracker.purchase(order)
    tracker.flush()
    const [event] = JSON.parse(net.fetch.mock.calls[0][1].body as string)
    expect(event.user.lang).toEqual(navigator.languages)
    expect(event.properties.line_items).toEqual(order.line_items)
    // The stored outbox too: a later page of the site reads the same shapes back.
    const [kept] = stored()
    expect(kept.properties.line_items).toEqual(order.line_items)
    expect(kept.user.lang).toEqual(navigator.languages)
  })

  it('keeps the ids for the page where document.cookie throws (sandboxed frame)', () => {
    const net = network()
    const { errors, onError } = errorsOf()
    const denied = () => {
      throw new DOMException('The document is sandboxed and lacks the allow-same-origin flag.', 'SecurityError')
    }
    define(document, 'cookie', { get: denied, set: denied })
    const tracker = make({ onError, cookieDomain: 'auto' })
    tracker.clickItem(click)
    vi.advanceTimersByTime(1500)
    tracker.clickItem(click)
    tracker.reset()
    tracker.clickItem(click)
    tracker.flush()
    expect(errors).toEqual([])
    const [first, second, afterReset] = net.events()
    expect(first.user.uid).toMatch(/^[\w-]{21}$/)
    expect(second.user).toMatchObject({ uid: first.user.uid, sid: first.user.sid })
    expect(afterReset.user.uid).not.toBe(first.user.uid)
  })
})

describe('values that throw', () => {
  // item_id for the events, email for identify().
  const throwingGetter = (thrown: unknown) => {
    const get = () => {
      throw thrown
    }
    return Object.defineProperties({ rid: 's-1', variant_item_id: '421' }, { item_id: { enumerable: true, get }, email: { enumerable: true, get } })
  }
  const unprintable = Object.assign(new Error('x'), {
    toString: () => {
      throw Object.create(null)
    }
  })
  const trap = () => {
    throw Object.create(null)
  }

  it.each([
    ['a getter that throws Object.create(null)', throwingGetter(Object.create(null))],
    ['a getter that throws an error whose toString throws', throwingGetter(unprintable)],
    ['a getter that throws a Symbol', throwingGetter(Symbol('thrown'))],
    ['a Proxy whose every trap throws', new Proxy({}, { get: trap, has: trap, ownKeys: trap, getOwnPropertyDescriptor: trap, getPrototypeOf: trap })]
  ])('never lets %s reach the caller, reports it with a message, and keeps working', (_, properties) => {
    const net = network()
    const { errors, onError } = errorsOf()
    const tracker = make({ onError })
    for (const call of [
      () => tracker.clickItem(properties as never),
      () => tracker.track('click-item', properties as never),
      () => tracker.identify(properties as never),
      () => tracker.viewPage(properties as never)
    ]) {
      expect(call).not.toThrow()
    }
    expect(errors).toHaveLength(4)
    for (const error of errors) expect(error.message).toMatch(/^discovery-feedback: .+/)
    expect(tracker.stats().dropped.invalid).toBe(4)
    tracker.clickItem(click)
    tracker.flush()
    expect(net.events().map((event) => event.properties)).toEqual([click])
  })

  it('reports options whose getters throw instead of throwing from createTracker', () => {
    const { errors } = errorsOf()
    let tracker: ReturnType<typeof createTracker> | undefined
    const options = Object.defineProperty({}, 'key', {
      enumerable: true,
      get: () => {
        throw Object.create(null)
      }
    })
    expect(() => (tracker = createTracker(options as never))).not.toThrow()
    expect(() => tracker!.clickItem(click)).not.toThrow()
    tracker!.destroy()
    // onError itself was unreadable, so the console carries it.
    expect(errors).toEqual([])
    expect(vi.mocked(console.error).mock.calls.map((call) => String(call[0]))).toEqual(Array(2).fill('discovery-feedback: init: options could not be read'))
  })

  it('survives a console.error that throws', () => {
    network()
    const errors: FeedbackError[] = []
    vi.spyOn(console, 'error').mockImplementation(() => {
      throw new Error('console is broken')
    })
    const tracker = make({ onError: (error) => errors.push(error) })
    expect(() => tracker.clickItem({} as never)).not.toThrow()
    expect(errors[0].message).toBe('discovery-feedback: click-item: item_id is required')
  })
})

describe('a page that wraps its own fetch and globals', () => {
  it('sends each event once when its fetch wrapper calls flush() while the page hands events over', async () => {
    const onWire: string[] = []
    // The browser takes the first beacon only: the rest goes by fetch, whose wrapper flushes.
    let beacons = 0
    define(navigator, 'sendBeacon', {
      writable: true,
      value: (_url: string, body: string) => {
        if (beacons++ > 0) return false
        for (const event of JSON.parse(body)) onWire.push(event.event_id)
        return true
      }
    })
    vi.stubGlobal(
      'fetch',
      vi.fn((_url: string, init: RequestInit) => {
        for (const event of JSON.parse(init.body as string)) onWire.push(event.event_id)
        // Declared below: the wrapper runs only once the tracker sends.
        tracker.flush()
        return Promise.resolve(new Response(null, { status: 204 }))
      })
    )
    const tracker = make({ flushInterval: 60000 })
    // Two bodies' worth of events: about 80 KB.
    for (let index = 0; index < 40; index++) tracker.clickSuggestion({ rid: 's-' + index, suggestion: 'x'.repeat(2000) })
    setVisibility('hidden')
    await settle()
    expect(onWire).toHaveLength(40)
    expect(new Set(onWire).size).toBe(40)
    expect(tracker.stats().sent).toBe(40)
  })

  it('delivers what it queued when the page removes TextEncoder afterwards, and flush() throws nothing', async () => {
    const net = network()
    const tracker = make({ flushInterval: 60000 })
    tracker.clickItem(click)
    define(globalThis, 'TextEncoder', { value: undefined, writable: true })
    await expect(tracker.flush()).resolves.toBeUndefined()
    expect(net.events().map((event) => event.event)).toEqual(['click-item'])
  })
})

describe('events too large for any request', () => {
  it('are refused when tracked, so they never push valid events out of the outbox', () => {
    const net = network()
    const { errors, onError } = errorsOf()
    const tracker = make({ onError })
    const huge = 'x'.repeat(1 << 20)
    tracker.clickItem(click)
    for (let i = 0; i < 3; i++) tracker.clickSuggestion({ rid: 'a-1', suggestion: huge })
    tracker.clickItem({ ...click, item_id: '43' })
    expect(tracker.stats()).toMatchObject({ queued: 2, dropped: { too_large: 3, overflow: 0 } })
    expect(errors.map((error) => error.message)).toEqual(Array(3).fill('discovery-feedback: click-suggestion: event dropped: too large for a request'))
    tracker.flush()
    expect(net.events().map((event) => event.properties.item_id)).toEqual(['42', '43'])
  })
})

describe('API fuzz', () => {
  it('lets no exception of 5,000 hostile calls reach the caller, and delivers every valid event once', async () => {
    const net = network()
    const { errors, onError } = errorsOf()
    quietConsole('log')
    const tracker = make({ onError, maxBatchEvents: 50 })
    const command = (name: any, ...args: any[]) => (name === 'user' ? tracker.identify(args[0]) : tracker.track(name, args[0]))
    const { valid, threw } = fuzz({ tracker, command, seed: 7, count: 5000 })
    expect(threw).toBe(0)
    await vi.runAllTimersAsync()
    await tracker.flush()
    const delivered = net
      .events()
      .map((event) => String(event.properties.item_id))
      .filter((id) => id.startsWith('valid-'))
    expect(delivered).toEqual(valid)
    expect(errors.length).toBeGreaterThan(1000)
    for (const error of errors) expect(typeof error.message == 'string' && error.message.startsWith('discovery-feedback: ')).toBe(true)
  })
})
