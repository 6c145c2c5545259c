// What a TCF CMP's answer decides for the tracker: the purposes, the vendor, the publisher's restrictions.
import { feedbackError, reporter } from '../../shared/error'
import { describe } from '../../shared/rules'
import type { Consent } from './types'

/** The fields of the CMP API's TCData that decide (CMP API v2, "TCData"). */
export interface TCData {
  gdprApplies?: boolean
  eventStatus?: string
  listenerId?: number
  purposeOneTreatment?: boolean
  purpose?: { consents?: Record<number, boolean> }
  vendor?: { consents?: Record<number, boolean> }
  publisher?: {
    consents?: Record<number, boolean>
    /** Restriction types by purpose, then by vendor id: 0 not allowed, 1 consent only, 2 legitimate interest only. */
    restrictions?: Record<number, Record<number, number> | undefined>
  }
}

/** What the shop requires of an answer, as tcfConsent's options give it (TcfOptions). */
interface TcfRequirements {
  purposes?: unknown
  vendorId?: number
  requirePurposeOne?: boolean
  source?: 'purpose' | 'publisher'
}

const DEFAULT_PURPOSES = [1, 8]
const isPurposeId = (id: unknown) => Number.isInteger(id) && (id as number) >= 1 && (id as number) <= 11

/** The purposes to require: the shop's, or the default when they are no list of TCF purpose ids. */
function purposesOf(given: unknown): number[] {
  if (given === undefined) return DEFAULT_PURPOSES
  if (Array.isArray(given) && given.length && given.every(isPurposeId)) return given
  // An empty list would grant with nothing consented.
  reporter(undefined)(
    feedbackError('tcfConsent', 'purposes', 'must be a non-empty array of TCF purpose ids (1 to 11), got ' + describe(given) + ': [1, 8] are required instead')
  )
  return DEFAULT_PURPOSES
}

/**
 * Makes the function that reads a CMP's answer as a consent state: `'granted'` when GDPR does
 * not apply, or when every required purpose (and the vendor, with `vendorId`) has consent and no
 * publisher restriction forbids it; `'denied'` otherwise; undefined while the CMP has not decided.
 * Purposes the shop gave that are no list of TCF purpose ids are reported here, once.
 */
export function tcfDecision(requirements: TcfRequirements) {
  const purposes = purposesOf(requirements.purposes)
  const source = requirements.source || 'purpose'

  /** The purposes that must have consent for this answer. */
  const neededFor = (data: TCData) => {
    // Purpose 1 is not disclosed under purposeOneTreatment, so it has no consent to read; but
    // something consented is always required.
    const withoutOne = purposes.filter((id) => id != 1)
    return data.purposeOneTreatment === true && !requirements.requirePurposeOne && withoutOne.length ? withoutOne : purposes
  }

  /** Whether the publisher allows the vendor a purpose on consent: restriction 0 forbids it, 2 allows legitimate interest only. */
  const restricted = (data: TCData, purpose: number) => {
    const type = requirements.vendorId == null ? undefined : data.publisher?.restrictions?.[purpose]?.[requirements.vendorId]
    return type === 0 || type === 2
  }

  return (data: TCData): Consent | undefined => {
    if (data.gdprApplies === false) return 'granted'
    if (data.eventStatus != 'tcloaded' && data.eventStatus != 'useractioncomplete') return
    if (data.gdprApplies !== true) return
    const consents = (source == 'publisher' ? data.publisher : data.purpose)?.consents || {}
    const needed = neededFor(data)
    const purposesOk = needed.every((id) => consents[id] === true && !restricted(data, id))
    const vendorOk = requirements.vendorId == null || data.vendor?.consents?.[requirements.vendorId] === true
    return purposesOk && vendorOk ? 'granted' : 'denied'
  }
}
