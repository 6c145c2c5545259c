// What the adapters' unit tests drive instead of a tracker: a consent() that records each state.
import type { Consent, ConsentTarget } from '../../../src/integrations/consent/types'

export function recordingTarget() {
  const states: Consent[] = []
  const target: ConsentTarget = { consent: (state) => void states.push(state) }
  return { target, states, last: () => states[states.length - 1] }
}
