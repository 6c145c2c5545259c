// This API fuzz is shared by the jsdom suite and the real-browser suite, which serves it to the
// page as a module. It makes random calls of the tracker's methods and of the script tag's
// command function with hostile arguments, with a valid click-item with a unique item_id between
// them. It is plain JavaScript, so that a browser runs it as it is.

/** Makes a small seeded generator (mulberry32), so that a failing seed replays the same calls. */
export function random(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const NAMES = [
  'click-suggestion',
  'click-item',
  'redirect',
  'purchase',
  'update-cart',
  'add-to-cart',
  'view-page',
  'flush',
  'user',
  'consent',
  'init',
  '',
  'click_item',
  'CLICK-ITEM',
  '__proto__',
  'constructor',
  'toString'
]
const METHODS = ['clickSuggestion', 'clickItem', 'redirect', 'purchase', 'updateCart', 'addToCart', 'viewPage', 'track', 'identify', 'consent', 'flush']

/** Runs `count` calls. It returns the item_ids of the valid clicks and how many calls threw. */
export function fuzz({ tracker, command, seed = 1, count = 5000, bigEvery = 200 }) {
  const next = random(seed)
  const pick = (list) => list[Math.floor(next() * list.length)]
  const oneMegabyte = 'x'.repeat(1 << 20)

  const cyclic = () => {
    const object = { item_id: '1', variant_item_id: '1' }
    object.self = object
    object.line_items = [object]
    return object
  }
  const throwing = () => {
    const thrown = pick([
      Object.create(null),
      {
        toString: () => {
          throw new Error('toString')
        }
      },
      Object.assign(new Error('message'), {
        toString: () => {
          throw Object.create(null)
        }
      }),
      Symbol('thrown'),
      undefined,
      null,
      new Proxy(
        {},
        {
          get: () => {
            throw Object.create(null)
          }
        }
      )
    ])
    return Object.defineProperty({ rid: 's-1' }, pick(['item_id', 'variant_item_id', 'suggestion', 'line_items', 'url', 'rid', 'uid', 'email', 'key']), {
      enumerable: true,
      get: () => {
        throw thrown
      }
    })
  }
  const trap = () => {
    throw Object.create(null)
  }
  const hostileProxy = () => new Proxy({}, { get: trap, has: trap, ownKeys: trap, getOwnPropertyDescriptor: trap, getPrototypeOf: trap })
  const badToString = () => ({
    toString: () => {
      throw Object.create(null)
    },
    valueOf: () => {
      throw Object.create(null)
    }
  })

  const value = (depth = 0) => {
    switch (Math.floor(next() * (depth > 1 ? 12 : 17))) {
      case 0:
        return null
      case 1:
        return undefined
      case 2:
        return pick([NaN, Infinity, -1, 0, 1.5, 2 ** 53, -0])
      case 3:
        return next()
          .toString(36)
          .slice(2, 2 + Math.floor(next() * 12))
      case 4:
        return Symbol('s')
      case 5:
        return BigInt(Math.floor(next() * 1000))
      case 6:
        return badToString()
      case 7:
        return () => 1
      case 8:
        return true
      case 9:
        return new Date()
      case 10:
        return ''
      case 11:
        return 'x'.repeat(33)
      case 12:
        return Array.from({ length: Math.floor(next() * 4) }, () => value(depth + 1))
      case 13:
        return cyclic()
      case 14:
        return throwing()
      case 15:
        return hostileProxy()
      default: {
        // This is an object with a few of the fields that SPEC names, each with a random value.
        const object = {}
        const fields = Math.floor(next() * 5)
        for (let i = 0; i < fields; i++) {
          object[
            pick([
              'rid',
              'item_id',
              'variant_item_id',
              'suggestion',
              'quantity',
              'line_items',
              'order_id',
              'currency',
              'revenue',
              'url',
              'width',
              'uid',
              'sid',
              'lang',
              '__proto__'
            ])
          ] = value(depth + 1)
        }
        return object
      }
    }
  }

  const valid = []
  let threw = 0
  for (let i = 0; i < count; i++) {
    let call
    if (i % 10 == 5) {
      const properties = { item_id: 'valid-' + seed + '-' + i, variant_item_id: 'v' }
      valid.push(properties.item_id)
      call = pick([() => tracker.clickItem(properties), () => tracker.track('click-item', properties), () => command('click-item', properties)])
    } else if (i % bigEvery == 7) {
      // No request can carry this valid event. It is refused as too large, and it never gets in
      // the way of the others.
      call = () => command('click-suggestion', { rid: 'a-1', suggestion: oneMegabyte })
    } else {
      const argument = value()
      call = pick([
        () => tracker[pick(METHODS)](argument),
        () => tracker.track(pick([...NAMES, value()]), argument),
        () => command(pick([...NAMES, value()]), argument),
        () => command(value(), value(), value()),
        () => tracker.identify(argument)
      ])
    }
    try {
      call()
    } catch {
      threw++
    }
  }
  return { valid, threw }
}
