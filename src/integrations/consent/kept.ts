// Whether this browser holds anything the tracker stored: what a consent adapter asks before it
// lets a banner's "denied" delete, since with nothing stored a denial has nothing to delete.
import { OUTBOX_PREFIX, SID_COOKIE, UID_COOKIE } from '../../shared/ids'
import { attempt } from '../../shared/attempt'

/**
 * True when the shopper's id cookies or a stored outbox are here: consent was granted on this
 * browser before (the tracker writes neither without it). A cookie or storage that cannot be
 * read (a sandboxed frame) counts as holding nothing, as the tracker could not have written there.
 */
export function keptHere(): boolean {
  if (typeof document == 'undefined') return false
  const cookies = attempt(() => document.cookie) || ''
  if (cookies.split(/; */).some((pair) => pair.startsWith(UID_COOKIE + '=') || pair.startsWith(SID_COOKIE + '='))) return true
  return !!attempt(() => Object.keys(localStorage).some((key) => key.startsWith(OUTBOX_PREFIX)))
}
