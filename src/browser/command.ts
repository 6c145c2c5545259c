import type { EventName, EventProperties, User } from '../shared/types'
import { attempt } from '../shared/attempt'
import type { Addon, CommandFunction, Consent, Tracker, TrackerOptions } from './types'

/** A call as a page makes it: a command and its arguments, not yet checked. */
export type Call = [command: unknown, ...args: unknown[]]

/**
 * Runs one command on the tracker. The arguments are the page's, unchecked: the tracker's
 * methods check them and report what is wrong. `switch` compares strictly: a command that is an
 * object must reach the rules, not have its toString run here. 'flush' returns its promise, so
 * that a page can wait for the events to go before it navigates.
 */
function run(tracker: Tracker, [command, argument]: Call) {
  switch (command) {
    case 'user':
      return tracker.identify(argument as Partial<User>)
    case 'consent':
      return tracker.consent(argument as Consent)
    case 'use':
      return tracker.use(argument as Addon)
    case 'flush':
      return tracker.flush()
    case 'reset':
      return tracker.reset()
    default:
      // Any other command is an event; the rules refuse one that is not SPEC's, by name.
      return tracker.track(command as EventName, argument as EventProperties[EventName])
  }
}

const isUse = (call: Call) => call[0] === 'use'

/**
 * Calls waiting for the tracker, in the order they are replayed: the add-ons' 'use' first, so
 * that an add-on hears the events the page queued before its own script ran
 * (docs/guide/extending.md); the rest in the order the page made them.
 */
export const addonsFirst = (calls: Call[]) => calls.filter(isUse).concat(calls.filter((call) => !isUse(call)))

/**
 * The script tag's `discoveryFeedback(command, ...args)`. Calls before 'init' wait, and 'init'
 * creates the tracker and replays them in order. Nothing is thrown into the page: only a strict
 * tracker throws, or a call the page left malformed, and either is shown in the console.
 * Returns the command function, typed twice over: as CommandFunction for the page, and as `call`
 * for the calls in the stub's queue, which nobody has checked yet.
 */
export function createCommandFunction(createTracker: (options: TrackerOptions) => Tracker) {
  let tracker: Tracker | undefined
  const waiting: Call[] = []

  /** Runs what a strict tracker or a malformed call may make throw, and shows it instead; returns its result. */
  const shown = <T>(work: () => T) => {
    try {
      return work()
    } catch (error) {
      attempt(() => console.error(error))
    }
  }

  const init = (options: TrackerOptions) => {
    if (tracker) return console.error('discovery-feedback: init: a tracker already exists on this page')
    const created = createTracker(options)
    tracker = created
    discoveryFeedback.tracker = created
    // Each on its own: a call a strict tracker throws on must not keep the ones after it from running.
    addonsFirst(waiting.splice(0)).forEach((queued) => shown(() => run(created, queued)))
  }

  const call = (...args: Call) => {
    const current = tracker
    if (args[0] === 'init') return shown(() => init(args[1] as TrackerOptions))
    if (current) return shown(() => run(current, args))
    waiting.push(args)
  }

  const discoveryFeedback: CommandFunction & typeof call = Object.assign(call, { createTracker })
  return discoveryFeedback
}

/** The page's `discoveryFeedback` as an add-on sees it: the script tag's stub with its queue (docs/guide/script-tag.md), or the tracker's command function. */
export type PageCommand = ((...args: unknown[]) => void) & Partial<Pick<CommandFunction, 'tracker' | 'createTracker'>> & { q?: ArrayLike<unknown>[] }

/**
 * For the add-on script tags (declarative, data layer), which send through the page's command
 * function so that they may load before or after the tracker: the function under the global
 * name, with the script tag's stub (docs/guide/script-tag.md) installed first for a page that has none yet (or whose global is
 * taken by something else, such as an element with that id). The name is read at each call: a
 * stub captured once would queue into an array nobody reads after the tracker has replaced it.
 */
export function pageCommand(page: { discoveryFeedback?: unknown }): () => PageCommand {
  if (typeof page.discoveryFeedback != 'function') {
    const stub: PageCommand = function () {
      // eslint-disable-next-line prefer-rest-params -- the stub keeps `arguments` objects, as the script tag guide's does
      ;(stub.q as unknown[]).push(arguments)
    }
    // Made at once, not at the first call: a page may freeze the stub before it calls it.
    stub.q = []
    page.discoveryFeedback = stub
  }
  return () => page.discoveryFeedback as PageCommand
}
