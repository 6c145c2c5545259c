// The shopper's id cookies, as the tracker keeps them in the browser and the shop's server
// renews them (server/identity-cookie.ts): one name and one shape on both sides.
export const UID_COOKIE = 'df_uid'
export const SID_COOKIE = 'df_sid'
/** The start of every localStorage key of the tracker's outbox (browser/outbox.ts, "Storage layout"); a consent adapter looks for it too. */
export const OUTBOX_PREFIX = 'df_q_'

// Ids of ours (shared/random-id.ts, and the nanoids of earlier versions), at most 32
// characters (SPEC "Limits"). Anything else in our cookie was written by someone else and is
// replaced, never sent.
export const OUR_ID = /^[\w-]{1,32}$/
