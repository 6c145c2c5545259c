import { feedbackError } from '../../shared/error'

/*
 * Whether a view_item may still name the product of its page's view-page. The tracker's
 * automatic view-page goes one task after the page or the route appears, or sooner if the page
 * is hidden or left first, and it is skipped when the last view-page tracked was of the same
 * URL. A view_item that comes before it becomes that view-page, and the tracker then skips its
 * own; one that comes after it would count the page twice. The tracker tells its add-ons the URL
 * of the view-page it counted last (its `view` hook): that is the account kept here, with the
 * bridge's own view-page counted from the moment it is sent, even while it waits in the script
 * tag's queue for the tracker to load.
 *
 * A view-page the shop tracks itself for the page whose view-page the bridge sent (a page with
 * autoViewPage false that calls viewPage() and also pushes view_item) would count the page
 * twice as well: the first of the two to reach the tracker wins, as for clicks.
 */

/** A view_item too late to name its page's view-page. */
export const lateView = () =>
  feedbackError(
    'view_item',
    undefined,
    'came after this page\'s view-page was tracked: not sent again, so that the page counts once (docs, guide "GA4 data layer")'
  )

export interface Views {
  /** Whether a view-page of this URL would not repeat the last one: in time for the product's details. */
  firstView(url: string): boolean
  /** Whether the last view-page was the bridge's, of this URL: a second one would count the page twice. */
  repeatsBridge(url: string): boolean
  /** The bridge sends a view-page of this URL: it counts from now, even while it waits in the queue. */
  sent(url: string): void
  /**
   * The bridge's view-page of this URL reaches the tracker: whether the tracker counted a
   * view-page of the same URL since it was added, one the page had queued before the bridge's.
   * The bridge's is then a second view of the page.
   */
  arrived(url: string): boolean
  /**
   * What the tracker tells (its `view` hook): the URL of the view-page it counted last. It tells
   * it at once when it takes the add-on: for a tracker that replays its queue, before the calls
   * queued for it, so that what the bridge sent is counted again as it arrives.
   */
  told(url: string | undefined): void
}

export function createViews(): Views {
  // The URL of the view-page counted last, and whether it was the bridge's.
  let viewedUrl: string | undefined
  let byBridge = false
  const sent = (url: string) => {
    viewedUrl = url
    byBridge = true
  }
  return {
    firstView: (url) => url != viewedUrl,
    repeatsBridge: (url) => byBridge && url == viewedUrl,
    sent,
    arrived(url) {
      const second = !byBridge && url == viewedUrl
      if (!second) sent(url)
      return second
    },
    told(url) {
      // The bridge's own view-page, taken, stays the bridge's.
      if (url === viewedUrl) return
      viewedUrl = url
      byBridge = false
    }
  }
}
