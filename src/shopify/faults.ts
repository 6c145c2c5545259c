import { asFeedbackError, feedbackError, reporter } from '../shared/error'
import type { ShopifyOptions, ShopifyStats } from './types'

/**
 * Where every fault of a pixel ends, as the storefront tracker's (browser/faults.ts): counted
 * by reason, shown in the console and handed to `onError`. Nothing thrown here, or by the
 * shop's handler, reaches Shopify's code.
 */
export function createPixelFaults(options: ShopifyOptions) {
  const dropped: ShopifyStats['dropped'] = { invalid: 0, rejected: 0, too_large: 0, overflow: 0 }

  const report = reporter(options?.onError)

  return {
    dropped,
    report,
    /** An event that could not be mapped or was refused by the rules: counted and reported. */
    invalid(caught: unknown) {
      dropped.invalid++
      report(asFeedbackError(caught))
    },
    /** Events given up after they were accepted, by reason. */
    drop(count: number, reason: 'rejected' | 'too_large' | 'overflow', event: string | undefined, why: string) {
      dropped[reason] += count
      report(feedbackError(count == 1 ? event : undefined, undefined, (count == 1 ? 'event' : count + ' events') + ' dropped: ' + why))
    }
  }
}
