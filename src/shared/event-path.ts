import { asFeedbackError, feedbackError } from './error'
import { validate } from './rules'
import type { EventName, FeedbackError, Outcome } from './types'

/**
 * What a sender gives the way every event takes. The way itself is the same for all: the
 * add-ons' say, SPEC's rules, the events SPEC sends along with it, then the sender's queue,
 * which may still refuse it (consent denied). `C` is what a sender's call carries to its queue beside the
 * event: nothing on a shop's page, Shopify's context and time in the pixel, the shopper on the
 * server.
 */
export interface EventSteps<C> {
  /** The add-ons' say before the rules: the properties to check, or undefined when one dropped the event. */
  change?(event: EventName, input: unknown): { properties: unknown } | undefined
  /**
   * Puts a checked event in its envelope and queues it; returns the error it was dropped or
   * refused with (too large, consent denied), if it was.
   */
  queue(event: EventName, properties: Record<string, unknown>, context: C): FeedbackError | undefined
  /** Hears what became of every event, those sent along with another too. */
  outcome?(outcome: Outcome): void
  /** An event sent along with another that could not be taken: the one it came with still is. */
  failed(error: FeedbackError): void
}

/**
 * The way of an event, in one direction: add-ons, rules, the events sent along, the queue. Returns what became of it (taken when `error` is undefined); throws the rules'
 * FeedbackError, naming the event, the field and the rule, for the sender to report or throw as
 * it does with every fault of its caller's.
 */
export function createEventPath<C>(steps: EventSteps<C>) {
  const settle = (outcome: Outcome) => {
    steps.outcome?.(outcome)
    return outcome
  }

  const take = (event: EventName, input: unknown, context: C): Outcome => {
    const changed = steps.change ? steps.change(event, input) : { properties: input }
    if (!changed) return settle({ event, properties: input, error: feedbackError(event, undefined, 'dropped by an add-on') })
    let properties
    try {
      properties = validate(event, changed.properties)
    } catch (caught) {
      settle({ event, properties: changed.properties, error: asFeedbackError(caught) })
      throw caught
    }
    // SPEC "Event kinds": a click-item is sent along with add-to-cart, by every sender, and goes
    // the way of every event. Its rules pick its fields out of the add-to-cart's, which passed
    // stricter ones.
    if (event == 'add-to-cart') takeAlong('click-item', validate('click-item', properties), context)
    return settle({ event, properties, error: steps.queue(event, properties, context) })
  }

  /** An event sent along with another: what keeps it from being taken is the sender's to hear, not its companion's. */
  const takeAlong = (event: EventName, properties: Record<string, unknown>, context: C) => {
    try {
      take(event, properties, context)
    } catch (caught) {
      steps.failed(asFeedbackError(caught))
    }
  }

  return take
}
