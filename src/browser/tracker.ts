import { envelope } from '../shared/envelope'
import { feedbackError } from '../shared/error'
import { createEventPath } from '../shared/event-path'
import { checkUser, expectOneOf } from '../shared/rules'
import type { EventName, EventProperties, FeedbackError, User } from '../shared/types'
import { optedOut } from '../shared/privacy-signals'
import { createAddons } from './addons'
import { STATES } from './consent'
import { createDelivery, type Delivery } from './delivery'
import { createFaults } from './faults'
import { createIdentity } from './identity'
import { followPage } from './lifecycle'
import { readOptions } from './options'
import { createOutbox, type Entry, type Outbox } from './outbox'
import { followPageViews } from '../shared/page-views'
import type { Addon, Consent, Stats, Tracker, TrackerOptions } from './types'

/**
 * Creates a tracker from its parts: the options, read once; its faults; its add-ons; the outbox
 * that keeps events; the shopper's identity; delivery; the page's life cycle and its automatic views. The
 * tracker itself holds what its methods share: the consent state (consent.ts) and the last page
 * viewed. Bad options are reported, never thrown (unless `strict`): every call is then refused
 * with the same clear message, and the host page keeps running. Where there is no `window`
 * (server rendering) every call does nothing.
 * @param options - The key, the collector's URL, and the other settings (TrackerOptions).
 */
export function createTracker(options: TrackerOptions): Tracker {
  const browser = typeof window == 'object'
  const { settings, user, broken } = readOptions(options, browser)
  const { dropped, drop, invalid, guard, report } = createFaults(settings, broken)
  const addons = createAddons(report)
  // Aborted by destroy(): every listener and history patch goes with it.
  const life = new AbortController()
  const signal = life.signal

  // Parts exist only where they can run: in a browser, with options that work.
  const outbox = browser && !broken ? createOutbox(drop) : undefined
  const identity = outbox && createIdentity(settings, user)
  const blocked = outbox && optedOut(settings)
  let consent: Consent = blocked ? 'denied' : settings.consent || 'granted'
  const granted = () => consent == 'granted'
  // Storage only with consent, and not in memory mode.
  const persist = () => outbox?.setPersist(granted() && settings.storage != 'memory')
  persist()
  const delivery = outbox && createDelivery(settings, outbox, drop, granted)
  let lastUrl: string | undefined

  /** Queues an event in its envelope; returns the error it was refused with when consent is denied, or dropped with when it is too large for any request. */
  const push = (event: EventName, properties: Record<string, unknown>): FeedbackError | undefined => {
    if (consent == 'denied') return feedbackError(event, undefined, 'not tracked: consent denied')
    // Until consent, events wait without a user: reading or writing the identity cookies needs
    // consent too. They get the shopper's identity the moment it is granted.
    const shopper = granted() ? identity!.user(true) : undefined
    const entry: Entry = { event: envelope(event, properties, settings.key, shopper) }
    // Refused now rather than at sending: in the outbox it would take the place of events that can go.
    if (delivery!.isOversized(entry)) return drop([entry], 'too_large')
    outbox!.add(entry)
    if (settings.debug) console.log('discovery-feedback:', event, properties)
    delivery!.queued()
  }

  /**
   * The way every event takes after the page's own step (shared/event-path.ts, as in the pixel and the server sender): the
   * add-ons, the rules, the events SPEC sends along, then the outbox (push: consent, the envelope), and the add-ons hear what
   * became of it. A view-page that was taken is the page the next one came from.
   */
  const takeEvent = createEventPath<void>({
    change: addons.change,
    queue: push,
    outcome(outcome) {
      addons.outcome(outcome)
      if (outcome.event == 'view-page' && !outcome.error) {
        lastUrl = (outcome.properties as EventProperties['view-page']).url
        addons.view(lastUrl)
      }
    },
    failed: invalid
  })

  /**
   * An event as the page tracks it. A view-page is completed from the page first: its URL, the
   * last view's URL as `ref`, the viewport. Throws a FeedbackError naming the event, the field
   * and the rule.
   */
  const record = (event: EventName, input: unknown) => {
    // Broken options refuse every event with the fault that broke them.
    if (broken) throw broken
    if (!outbox) return
    if (signal.aborted) throw feedbackError(event, undefined, 'was tracked after destroy()')
    // Anything but an object is left to the rules, which refuse it by name. The copy keeps every
    // own property of the caller's object, symbols too: an add-on may mark the events it sends
    // and know them again in its `event` hook (the GA4 bridge does, integrations/data-layer/link.ts).
    if (event == 'view-page' && (input == null || typeof input == 'object'))
      input = { url: location.href, ref: lastUrl ?? document.referrer, width: innerWidth, height: innerHeight, ...input }
    takeEvent(event, input)
  }

  /** Events tracked while consent was pending get the shopper's identity. */
  const identifyWaiting = () => {
    for (const entry of outbox!.entries) {
      if (!entry.event.user) outbox!.rewrite(entry, { ...entry.event, user: identity!.user(true) })
    }
  }

  /** The automatic view-pages and the page's life cycle: what the tracker follows on its own. */
  const followThisPage = (outbox: Outbox, delivery: Delivery) => {
    // The page a URL shows. An in-page link (`#reviews`) changes the fragment alone and stays on
    // the page: SPEC sends a view-page when the shopper "reaches any new page". On a hash-routed
    // site (`hashRouting`) the fragment is the route (`/#/cart`), and part of the page.
    const pageOf = (url: string | undefined) => (settings.hashRouting ? url : url?.split('#')[0])
    // The automatic view-page is skipped when the page is the one last viewed.
    const autoView = guard(() => {
      if (pageOf(location.href) != pageOf(lastUrl)) record('view-page', {})
    })
    const pageViews = settings.autoViewPage !== false ? followPageViews(autoView, signal) : undefined
    followPage(
      outbox,
      delivery,
      {
        beforeLeaving: () => pageViews?.recordDue(),
        restored() {
          // Back from the back/forward cache: to the shopper a new view, even of the same URL.
          lastUrl = undefined
          addons.view(lastUrl)
          pageViews?.restored()
        }
      },
      signal
    )
  }
  if (outbox && delivery) followThisPage(outbox, delivery)

  const track = guard(record)
  const flush = async (): Promise<void> => delivery?.flush()
  /** The helper of one event: clickSuggestion for click-suggestion, and so on. */
  const helper =
    <E extends EventName>(event: E) =>
    (properties: EventProperties[E]) =>
      track(event, properties)

  // The public methods: each runs inside the guard, so nothing a caller passes throws into the page.
  return {
    track,
    clickSuggestion: helper('click-suggestion'),
    clickItem: helper('click-item'),
    redirect: helper('redirect'),
    purchase: helper('purchase'),
    updateCart: helper('update-cart'),
    addToCart: helper('add-to-cart'),
    viewPage: helper('view-page'),
    identify: guard((fields: Partial<User>) => {
      const checked = checkUser('identify', fields)
      identity?.identify(checked)
    }),
    consent: guard((next: Consent) => {
      if (!outbox) return
      expectOneOf('consent', 'state', STATES, next)
      if (blocked) return
      consent = next
      if (next == 'denied') {
        // Withdrawn: nothing of ours stays behind, and nothing more is stored or sent.
        outbox.forget()
        identity!.forget()
      }
      if (granted()) identifyWaiting()
      persist()
      if (granted()) delivery!.wake()
      addons.consent(next)
    }),
    reset: guard(() => {
      // Logout on a shared computer: what the last shopper did leaves under their ids, which
      // its events already carry. The id cookies go first, so that the request sending them
      // carries none: a relay on the shop's origin then has no uid to renew, and cannot bring
      // the last shopper back with its answer (discovery-feedback/relay).
      identity?.forget(true)
      // Delivery's own flush, inside this guard: the tracker's async flush() would turn a throw into
      // a rejection nobody awaits, on the shop's console.
      delivery?.flush()
    }),
    get user(): User {
      return identity ? identity.user(granted()) : { uid: '', sid: '' }
    },
    stats: (): Stats => ({ queued: outbox?.entries.length || 0, sent: 0, retried: 0, ...delivery?.stats(), dropped: { ...dropped } }),
    flush,
    destroy: guard(() => {
      if (signal.aborted) return
      life.abort()
      // As in reset(): a throw is the guard's to report.
      delivery?.flush()
    }),
    use: guard((addon: Addon) => addons.add(addon, lastUrl, consent)) as Tracker['use']
  }
}
