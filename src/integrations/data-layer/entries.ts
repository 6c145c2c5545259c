import { attempt } from '../../shared/attempt'
import { feedbackError } from '../../shared/error'
import { describe } from '../../shared/rules'
import { isArguments } from '../follow-data-layer'
import type { Ga4Parameters } from './mapping'

/** A GA4 event as one data-layer entry holds it, in either form; its parameters not yet checked. */
export interface Ga4Entry {
  name: string
  parameters: unknown
  /** Where the parameters were: gtag's third argument, or the push's ecommerce. */
  field: 'parameters' | 'ecommerce'
}

// Universal Analytics' e-commerce actions, which hold what GA4 puts in `items`.
const UA_ACTIONS = ['purchase', 'add', 'remove', 'detail', 'click', 'checkout']

/**
 * The GA4 event of one data-layer entry, or undefined for anything else: gtag's
 * `gtag('event', name, parameters)` (an `Arguments` object), or `dataLayer.push({ event,
 * ecommerce })`. Each push is read on its own, never merged with earlier ones as GTM merges
 * them, so a page's `{ ecommerce: null }` is no concern here.
 */
export function ga4EventOf(entry: unknown): Ga4Entry | undefined {
  let name: unknown, parameters: unknown, field: Ga4Entry['field']
  if (isArguments(entry)) {
    if (entry[0] != 'event') return undefined
    name = entry[1]
    parameters = entry[2]
    field = 'parameters'
  } else if (entry && typeof entry == 'object' && !Array.isArray(entry)) {
    name = (entry as { event?: unknown }).event
    parameters = (entry as { ecommerce?: unknown }).ecommerce
    field = 'ecommerce'
  } else return undefined
  return typeof name == 'string' ? { name, parameters, field } : undefined
}

/** The parameters of a GA4 event the bridge maps; a FeedbackError naming the event when they are no object, or in Universal Analytics' form. */
export function parametersOf({ name, parameters, field }: Ga4Entry): Ga4Parameters {
  if (!parameters || typeof parameters != 'object') throw feedbackError(name, field, 'must be an object, got ' + describe(parameters))
  if (!('items' in parameters) && UA_ACTIONS.some((action) => action in parameters))
    throw feedbackError(name, field, "is in Universal Analytics' form (ecommerce.purchase, ecommerce.add …): the bridge reads GA4's, with ecommerce.items")
  return parameters as Ga4Parameters
}

/**
 * Whether this page is one loaded again (a reload, or history outside the back/forward cache):
 * it pushes what its HTML pushed the first time, and an add_to_cart printed after a form post
 * would be counted twice.
 */
export const loadedAgain = () =>
  attempt(() => {
    const type = (performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined)?.type
    return type == 'reload' || type == 'back_forward'
  }) ?? false
