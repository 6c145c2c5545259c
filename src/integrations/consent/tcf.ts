// IAB TCF v2.2 → the tracker's consent, through the page's CMP API (`window.__tcfapi`).
import { consentDriver } from './driver'
import { givenTracker } from '../../shared/given-tracker'
import { tcfDecision, type TCData } from './tcf-decision'
import { framedTcfApi, type FramedTcfApi, type TcfApi } from './tcf-frame'
import type { ConsentTarget, StopFollowing } from './types'

/** The options of `tcfConsent()`. */
export interface TcfOptions {
  /**
   * The TCF purposes that must all have consent. Default `[1, 8]`: 1 "Store and/or access
   * information on a device" (our `df_uid`/`df_sid` cookies and stored events; purpose 1 can
   * only rest on consent) and 8 "Measure content performance" (what the events are for). A
   * shop whose discovery service personalises results from a shopper's history should add 5
   * and 6 (profiles to personalise content), and 10 (develop and improve services) if the
   * events train the service.
   */
  purposes?: number[]
  /**
   * The vendor's id on the Global Vendor List, when the service is registered there: its consent
   * is then required too, and a publisher restriction that allows it none of the purposes, or
   * only on legitimate interest, denies.
   */
  vendorId?: number
  /**
   * Require purpose 1 even where the CMP says `purposeOneTreatment` (purpose 1 not disclosed, a
   * rule of the publisher's country). Default false: purpose 1 is then not required, as long as
   * another purpose is.
   */
  requirePurposeOne?: boolean
  /** Where purpose consent is read: the purposes' `'purpose'` consents (default), or the publisher segment's `'publisher'` consents. */
  source?: 'purpose' | 'publisher'
  /**
   * How long to wait, in ms, for `window.__tcfapi` (the CMP or its stub) or an ancestor frame's
   * `__tcfapiLocator` to appear. Default 10000; the tracker stays pending after.
   */
  timeout?: number
}

/** The field of the CMP API's PingReturn that says whether the CMP itself, not only its stub, answers. */
interface PingReturn {
  cmpStatus?: string
}

// How often the page is looked at for a CMP that has not loaded yet.
const POLL = 50
// How often a CMP in another frame is asked for its state (see ask below).
const ASK_EVERY = 1000
// A question to a CMP in another frame unanswered this long is taken as lost, and after this
// many lost ones the frame stops asking (see ask below).
const LOST_AFTER = 5000
const MAX_LOST = 3

/**
 * Follows an IAB TCF v2.2 CMP and drives `tracker.consent()`: `'pending'` at once, then
 * `'granted'` when every purpose in `purposes` (and the vendor, with `vendorId`) has consent or
 * when GDPR does not apply, `'denied'` otherwise, following every later choice. Returns a
 * function that stops following (removeEventListener; the tracker's consent stays as it is).
 *
 * ```js
 * tcfConsent(tracker, { purposes: [1, 8] })
 * ```
 *
 * - Registers with `__tcfapi('addEventListener', 2, callback)`. The CMP's stub, when the page has
 *   one, takes the call into its queue until the CMP loads; when there is no `__tcfapi` yet it is
 *   looked for every 50 ms until `timeout`. A CMP that never comes means no consent (CMP API v2:
 *   "vendors should assume no consent"): the tracker stays pending, nothing stored or sent.
 * - In a frame whose CMP is in an ancestor frame, the calls go there by postMessage, through its
 *   `__tcfapiLocator` frame (tcf-frame.ts), and the state is asked for every second (see `ask`).
 *   A same-origin frame goes the same way, so that every frame works alike whatever its origin.
 * - Acts on `tcloaded` (a stored choice) and `useractioncomplete` (the shopper just chose)
 *   only; during `cmpuishown` every consent reads false by definition, so it changes nothing.
 * - `gdprApplies` false → granted; undefined → the CMP has not decided, still pending.
 * - `purposeOneTreatment` true (purpose 1 not disclosed, as some countries allow) → purpose 1 is
 *   not required.
 * @param tracker - The tracker, or any object with its `consent()` (such as `{ consent: (state) => discoveryFeedback('consent', state) }` on a script-tag page).
 * @param options - The purposes and the vendor whose consent is needed.
 */
export function tcfConsent(tracker: ConsentTarget, options: TcfOptions = {}): StopFollowing {
  if (!givenTracker('tcfConsent', tracker, ['consent'])) return () => {}
  if (typeof window == 'undefined') return () => {}
  const page = window as Window & { __tcfapi?: TcfApi }
  const decide = tcfDecision(options)
  const timeout = options.timeout ?? 10000

  const driver = consentDriver(tracker)
  let listenerId: number | undefined
  let api: TcfApi | undefined
  // A CMP in an ancestor frame: the message listener that hears its answers.
  let framed: FramedTcfApi | undefined
  let poll: ReturnType<typeof setInterval> | undefined
  let asking: ReturnType<typeof setInterval> | undefined
  // A framed CMP: when the question in flight was asked (0 when none is), and how many were lost.
  let askedAt = 0
  let lost = 0
  // Stopped while a question was in flight: the frame's listener waits for its answer, this long at most.
  let closing: ReturnType<typeof setTimeout> | undefined

  const remove = () => {
    // Until the CMP has named the listener it cannot be removed: the listener does it when the name comes.
    if (api && listenerId != null) call(api, 'removeEventListener', () => {}, listenerId)
  }

  /** An answer of the CMP: passed on as a state when it decides one. */
  const heard = (data: TCData, success: boolean) => {
    if (!success || !data || typeof data != 'object' || driver.stopped) return
    const state = decide(data)
    if (state) driver.set(state)
  }

  const listener = (data: TCData, success: boolean) => {
    // The first call comes at registration, with our listenerId (CMP API v2, addEventListener).
    if (listenerId == null && data && typeof data.listenerId == 'number') {
      listenerId = data.listenerId
      // Stopped before the CMP answered: remove the listener now that it can be named.
      if (driver.stopped) {
        remove()
        return
      }
    }
    heard(data, success)
  }

  const call = <Data>(tcfapi: TcfApi, command: string, callback: (data: Data, success: boolean) => void, parameter?: unknown) => {
    try {
      tcfapi(command, 2, callback, parameter)
    } catch {
      // A broken CMP leaves the tracker pending: no consent.
    }
  }

  /** The frame's message listener goes: nothing more of the CMP is heard. */
  const closeFrame = () => {
    clearTimeout(closing)
    framed?.close()
  }

  /**
   * A CMP in another frame answers through its stub's message handler, and the IAB's own stub
   * (@iabtechlabtcf/stub) posts back only what the CMP answers during the call itself: the state
   * at registration, never a later change, and nothing at all for a call it queued until the CMP
   * loaded. So a frame keeps no listener there; it asks every second instead, once the CMP says
   * it has loaded (ping's cmpStatus): a listener added, answered at once with the current state,
   * and removed. The driver passes each state on once.
   *
   * One question at a time: a CMP that answers after the call has returned (the CMP API allows
   * it) is never heard through that stub, and the listener each question left at the CMP could
   * not be removed. So a question unanswered for LOST_AFTER counts as lost, and after MAX_LOST
   * lost ones the frame stops asking, the tracker left as it was.
   */
  const ask = (cmp: TcfApi) => {
    if (askedAt) {
      if (Date.now() - askedAt < LOST_AFTER) return
      askedAt = 0
      if (++lost >= MAX_LOST) {
        clearInterval(asking)
        return
      }
    }
    call(cmp, 'ping', (ping: PingReturn) => {
      if (driver.stopped || askedAt || !ping || ping.cmpStatus != 'loaded') return
      askedAt = Date.now()
      call(cmp, 'addEventListener', (data: TCData, success: boolean) => {
        askedAt = 0
        if (data && typeof data.listenerId == 'number') call(cmp, 'removeEventListener', () => {}, data.listenerId)
        // Stopped while this question was in flight: its listener is removed above, and now the frame can close.
        if (driver.stopped) closeFrame()
        else heard(data, success)
      })
    })
  }

  const found = () => {
    if (typeof page.__tcfapi == 'function') {
      api = page.__tcfapi
    } else {
      framed = framedTcfApi()
      api = framed?.api
    }
    const cmp = api
    if (!cmp) return false
    if (framed) {
      ask(cmp)
      asking = setInterval(() => ask(cmp), ASK_EVERY)
    } else {
      call(cmp, 'addEventListener', listener)
    }
    return true
  }

  driver.set('pending')
  if (!found()) {
    const end = Date.now() + timeout
    poll = setInterval(() => {
      if (found() || Date.now() >= end) clearInterval(poll)
    }, POLL)
  }

  return () => {
    if (driver.stopped) return
    driver.stop()
    clearInterval(poll)
    clearInterval(asking)
    remove()
    // A framed CMP's answers are no longer heard; but an answer still to come names a listener
    // that must be removed at the CMP, so the frame waits for it, LOST_AFTER at most.
    if (askedAt) closing = setTimeout(closeFrame, LOST_AFTER)
    else closeFrame()
  }
}
