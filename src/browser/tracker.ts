import { checkUser, EVENTS } from '../shared/rules'
import type { EventName, User } from '../shared/types'
// The outbox first: bundlers lay modules out in the order they are imported, and this order
// compresses smallest (npm run bench and size-limit measure it).
import { createOutbox } from './outbox'
import { createConsent } from './consent'
import { createDelivery } from './delivery'
import { createIdentity } from './identity'
import { followPage } from './lifecycle'
import { readOptions } from './options'
import { createRecorder } from './recorder'
import type { Consent, Tracker, TrackerOptions } from './types'

/**
 * Creates a tracker from its parts: the options, read once; the outbox that keeps events;
 * the shopper's identity; consent; delivery; the recorder, the way each event takes from a
 * method to the outbox; the page's life cycle; and the public methods. Bad options are
 * reported, never thrown (unless `strict`): every call is then refused with the same clear
 * message, and the host page keeps running. Where there is no `window` (server rendering)
 * every call does nothing.
 */
export function createTracker(options: TrackerOptions): Tracker {
  const browser = typeof window == 'object'
  const [settings, faults, user, broken] = readOptions(options, browser)
  const guard = faults.guard
  const counts = { sent: 0, retried: 0 }
  // Aborted by destroy(): every listener and history patch goes with it.
  const life = new AbortController()
  const signal = life.signal

  // Parts exist only where they can run: in a browser, with options that work.
  const outbox = browser && !broken ? createOutbox(faults.drop) : undefined
  const identity = outbox && createIdentity(settings, user)
  const consent =
    identity &&
    createConsent(settings, outbox!, identity, () => delivery!.wake())
  const delivery = consent && createDelivery(settings, outbox!, faults.drop, counts, consent.granted)
  const recorder = delivery && createRecorder(settings, faults, outbox!, identity!, consent!, delivery, signal)
  if (recorder) followPage(settings, recorder, outbox!, delivery!, guard, signal)

  // Broken options refuse every event with the fault that broke them; without a window there is nothing to do.
  const track = guard(
    recorder
      ? recorder.record
      : () => {
          if (broken) throw broken
        }
  )
  const flush = (): Promise<void> => (delivery ? delivery.flush() : Promise.resolve())

  // The public methods: each runs inside the guard, so nothing a caller passes throws into the page.
  const tracker: Record<string, unknown> = {
    track,
    identify: guard((fields: Partial<User>) => {
      const checked = checkUser('identify', fields)
      if (identity) identity.identify(checked)
    }),
    consent: guard((state: Consent) => consent && consent.set(state)),
    reset: guard(() => {
      // Logout on a shared computer: what the last shopper did leaves under their ids first.
      flush()
      if (identity) identity.forget(true)
    }),
    get user() {
      return identity ? identity.user(consent!.granted()) : ({ uid: '', sid: '' } as User)
    },
    stats: () => ({ queued: outbox ? outbox.entries.length : 0, ...counts, dropped: { ...faults.dropped } }),
    flush,
    destroy: guard(() => {
      if (signal.aborted) return
      life.abort()
      flush()
    })
  }
  // One method per event, named after it: clickSuggestion for click-suggestion, and so on.
  for (const event of Object.keys(EVENTS) as EventName[]) {
    tracker[event.replace(/-(\w)/g, (_, letter: string) => letter.toUpperCase())] = (properties: unknown) => track(event, properties)
  }
  return tracker as unknown as Tracker
}
