import { followPageViews } from '../../shared/page-views'
import type { Source } from './direct'
import { whenLeaving } from './leaving'

/*
 * Whether a view_item may still name the product of its page's view-page. The tracker's
 * automatic view-page goes one task after the page or the route appears (shared/page-views.ts),
 * or sooner if the page is hidden or left first (browser/lifecycle.ts), and it is skipped when
 * the last view-page tracked was of the same URL. A view_item that comes before it becomes that
 * view-page, and the tracker then skips its own; one that comes after it would count the page
 * twice. The tracker does not tell which URL it viewed last (the core script tag does not grow
 * for an integration), so the bridge keeps the same account: it follows the page with the
 * tracker's own timing (followPageViews and the same two leaving events), and it hears the
 * view-pages tracked directly through the tracker (direct.ts).
 *
 * A view-page the shop tracks itself for the page whose view-page the bridge sent (a page with
 * autoViewPage false that calls viewPage() and also pushes view_item) would count the page
 * twice as well: the first of the two wins, as for clicks.
 */

export interface Views {
  /** Whether a view-page of this URL would not repeat the last one: in time for the product's details. */
  firstView(url: string): boolean
  /** A view-page of this URL was tracked, by the bridge or by the shop's own call. */
  viewed(url: string, source: Source): void
  /** Whether the last view-page tracked was the bridge's, of this URL: a second one would count the page twice. */
  repeatsBridge(url: string): boolean
}

export interface ViewTiming {
  /** The tracker's autoViewPage: whether it sends view-pages by itself. */
  automatic: boolean
  /** Whether the page's view-page may have gone before the bridge started. */
  viewedAlready: boolean
}

export function followViews({ automatic, viewedAlready }: ViewTiming, signal: AbortSignal): Views {
  let viewedUrl = viewedAlready ? location.href : undefined
  let viewedByBridge = false
  if (automatic) {
    // Called in the same task as the tracker's automatic view, or in the next one: the two
    // timers of one navigation run one after the other. Either way the URL is the one the
    // tracker recorded. A bridge that wrapped history before the tracker hears the navigation
    // first, and may count a view_item between the two timers as late: never as a second view.
    const pageViews = followPageViews(() => {
      // The tracker skips its view of the URL viewed last: that view stays the bridge's, if it was.
      if (location.href == viewedUrl) return
      viewedUrl = location.href
      viewedByBridge = false
    }, signal)
    // Hidden or left before its task came, the page's due view is recorded at once by the tracker.
    whenLeaving(pageViews.recordDue, signal)
    // Back from the back/forward cache, the tracker views the page again.
    addEventListener(
      'pageshow',
      (event) => {
        if (!event.persisted) return
        viewedUrl = undefined
        viewedByBridge = false
        pageViews.restored()
      },
      { capture: true, signal }
    )
  }
  return {
    firstView: (url) => url != viewedUrl,
    viewed(url, source) {
      if (signal.aborted) return
      viewedUrl = url
      viewedByBridge = source == 'bridge'
    },
    repeatsBridge: (url) => viewedByBridge && url == viewedUrl
  }
}
