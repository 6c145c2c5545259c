import type { EventName, EventProperties, User } from '../shared/types'
import { attempt } from '../shared/attempt'
import type { CommandFunction, Consent, Tracker, TrackerOptions } from './types'

/** A call as a page makes it: a command and its arguments, not yet checked. */
export type Call = [command: unknown, ...args: unknown[]]

/**
 * Runs one command on the tracker. The arguments are the page's, unchecked: the tracker's
 * methods check them and report what is wrong. Strict comparisons only: a command that is an
 * object must reach the rules, not have its toString run here.
 */
function run(tracker: Tracker, [command, argument]: Call) {
  switch (command) {
    case 'flush':
      // Its promise, so that a page can wait for the events to go before it navigates.
      return tracker.flush()
    case 'consent':
      return tracker.consent(argument as Consent)
    case 'reset':
      return tracker.reset()
    case 'user':
      return tracker.identify(argument as Partial<User>)
    default:
      // Any other command is an event; the rules refuse one that is not SPEC's, by name.
      return tracker.track(command as EventName, argument as EventProperties[EventName])
  }
}

/**
 * The script tag's `discoveryFeedback(command, ...args)`. Calls before 'init' wait, and 'init'
 * creates the tracker and replays them in order. Nothing is thrown into the page: only a strict
 * tracker throws, or a call the page left malformed, and either is shown in the console.
 * Returns the command function and `call`, the same for a call not yet checked (the stub's queue).
 */
export function createCommandFunction(createTracker: (options: TrackerOptions) => Tracker) {
  let tracker: Tracker | undefined
  let waiting: Call[] = []

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
    const replayed = waiting
    waiting = []
    // Each on its own: a call a strict tracker throws on must not keep the ones after it from running.
    replayed.forEach((queued) => shown(() => run(created, queued)))
  }

  const call = (...args: Call) => {
    const current = tracker
    if (args[0] === 'init') return shown(() => init(args[1] as TrackerOptions))
    if (current) return shown(() => run(current, args))
    waiting.push(args)
  }

  const discoveryFeedback: CommandFunction = Object.assign(call, { createTracker })
  return { discoveryFeedback, call }
}
