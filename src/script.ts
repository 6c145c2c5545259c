// The tracker first: bundlers lay modules out in the order they are imported, and attempt()
// compresses smaller beside the outbox, its first user there, than at the top of the file.
import { createTracker } from './browser/tracker'
import { attempt } from './browser/attempt'
import type { CommandFunction, Tracker } from './browser/types'

/*
 * Entry of the script-tag build. The page's stub (see README) queues calls in
 * `discoveryFeedback.q` until this file runs; here the tracker is created from the script's
 * own data-* attributes (or a queued 'init'), every queued call is replayed in order, and the
 * stub is replaced by the real command function. The queue's array is never patched: a page
 * that kept a reference to the stub goes through the global name, which is now ours.
 */

type Call = [command: string, ...args: any[]]

;(() => {
  const global = window as any
  // Not a function: no stub, or an element whose id the browser exposes under that name.
  const stub = typeof global.discoveryFeedback == 'function' ? global.discoveryFeedback : {}
  // Loaded twice: the first copy owns the page, a second tracker would double every event.
  if (stub.createTracker) return
  let tracker: Tracker | undefined
  let waiting: Call[] = []

  // Commands that are tracker methods of the same name; any other but 'init' and 'user' is an
  // event. Strict comparisons (includes() is one): a command that is an object must reach the
  // rules, not have its toString run here.
  const run = ([command, argument]: Call) =>
    ['flush', 'consent', 'reset'].includes(command)
      ? (tracker as any)[command](argument)
      : command === 'user'
        ? tracker!.identify(argument)
        : tracker!.track(command as any, argument)

  const command = (...call: Call) => {
    try {
      if (call[0] !== 'init') return tracker ? run(call) : void waiting.push(call)
      if (tracker) return console.error('discovery-feedback: init: a tracker already exists on this page')
      tracker = discoveryFeedback.tracker = createTracker(call[1])
      waiting.forEach(run)
      waiting = []
    } catch (error) {
      // Only a strict tracker throws, or a queued call the page left malformed: shown, never
      // thrown into the page.
      attempt(() => console.error(error))
    }
  }
  const discoveryFeedback = command as unknown as CommandFunction
  discoveryFeedback.createTracker = createTracker
  global.discoveryFeedback = discoveryFeedback

  // Without data-key the tracker waits for a queued or later 'init'.
  const data = document.currentScript?.dataset
  if (data?.key) {
    const options: Record<string, unknown> = {}
    // Attributes are text: true, false and whole numbers become what the options expect. The
    // key stays text whatever it looks like.
    for (const name of Object.keys(data)) {
      const value = data[name]!
      options[name] = name != 'key' && /^(true|false|\d+)$/.test(value) ? JSON.parse(value) : value
    }
    command('init', options)
  }
  // Array.from with one argument only: Prototype.js replaces it with a version that takes no map function.
  ;(Array.from(stub.q || []) as ArrayLike<unknown>[]).forEach((args) => command(...(Array.from(args || []) as Call)))
})()
