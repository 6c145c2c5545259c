// IAB TCF v2.2 → the tracker's consent, through the page's CMP API (`window.__tcfapi`).
import { consentDriver } from './driver'
import type { Consent, ConsentTarget, StopFollowing } from './types'

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
  /** The vendor's id on the Global Vendor List, when the service is registered there: its consent is then required too. */
  vendorId?: number
  /** Where purpose consent is read: the purposes' `'purpose'` consents (default), or the publisher segment's `'publisher'` consents. */
  source?: 'purpose' | 'publisher'
  /** How long to wait, in ms, for `window.__tcfapi` (the CMP or its stub) to appear. Default 10000; the tracker stays pending after. */
  timeout?: number
}

/** The fields of the CMP API's TCData that decide (CMP API v2, "TCData"). */
interface TCData {
  gdprApplies?: boolean
  eventStatus?: string
  listenerId?: number
  purposeOneTreatment?: boolean
  purpose?: { consents?: Record<number, boolean> }
  vendor?: { consents?: Record<number, boolean> }
  publisher?: { consents?: Record<number, boolean> }
}

type TcfApi = (command: string, version: number, callback: (data: TCData, success: boolean) => void, parameter?: unknown) => void

// How often the page is looked at for a CMP that has not loaded yet.
const POLL = 50

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
 *   looked for every 50 ms until `timeout`. A CMP that never comes means no consent (CMP API
 *   v2: "vendors should assume no consent"): the tracker stays pending, nothing stored or sent.
 * - Acts on `tcloaded` (a stored choice) and `useractioncomplete` (the shopper just chose)
 *   only; during `cmpuishown` every consent reads false by definition, so it changes nothing.
 * - `gdprApplies` false → granted; undefined → the CMP has not decided, still pending.
 * - `purposeOneTreatment` true (purpose 1 not disclosed, as some countries allow) → purpose 1 is
 *   not required.
 * - A CMP in a parent frame reached only by postMessage (`__tcfapiLocator`) is not followed.
 */
export function tcfConsent(tracker: ConsentTarget, options: TcfOptions = {}): StopFollowing {
  if (typeof window == 'undefined') return () => {}
  const page = window as Window & { __tcfapi?: TcfApi }
  const purposes = options.purposes || [1, 8]
  const source = options.source || 'purpose'
  const timeout = options.timeout ?? 10000

  const driver = consentDriver(tracker)
  let listenerId: number | undefined
  let api: TcfApi | undefined
  let poll: ReturnType<typeof setInterval> | undefined

  const apply = driver.set

  const decide = (data: TCData): Consent | undefined => {
    if (data.gdprApplies === false) return 'granted'
    if (data.eventStatus != 'tcloaded' && data.eventStatus != 'useractioncomplete') return
    if (data.gdprApplies !== true) return
    const consents = (source == 'publisher' ? data.publisher : data.purpose)?.consents || {}
    const needed = data.purposeOneTreatment === true ? purposes.filter((id) => id != 1) : purposes
    const purposesOk = needed.every((id) => consents[id] === true)
    const vendorOk = options.vendorId == null || data.vendor?.consents?.[options.vendorId] === true
    return purposesOk && vendorOk ? 'granted' : 'denied'
  }

  const remove = () => {
    if (api && listenerId != null) call(api, 'removeEventListener', () => {}, listenerId)
  }

  const listener = (data: TCData, success: boolean) => {
    if (!success || !data || typeof data != 'object') return
    // The first call comes at registration, with our listenerId (CMP API v2, addEventListener).
    if (listenerId == null && typeof data.listenerId == 'number') {
      listenerId = data.listenerId
      // Stopped before the CMP answered: remove the listener now that it can be named.
      if (driver.stopped) return remove()
    }
    if (driver.stopped) return
    const state = decide(data)
    if (state) apply(state)
  }

  const call = (tcfapi: TcfApi, command: string, callback: (data: TCData, success: boolean) => void, parameter?: unknown) => {
    try {
      tcfapi(command, 2, callback, parameter)
    } catch {
      // A broken CMP leaves the tracker pending: no consent.
    }
  }

  const found = () => {
    if (typeof page.__tcfapi != 'function') return false
    api = page.__tcfapi
    call(api, 'addEventListener', listener)
    return true
  }

  apply('pending')
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
    remove()
  }
}
