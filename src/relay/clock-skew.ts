const DAY = 864e5

/**
 * When the sender says it sent the request (`?t_sent=`), if that is a time, and the gap between
 * its clock and ours: the event happened at t_client plus that gap. A t_sent that is no time, or
 * more than a day from ours, corrects nothing.
 */
export function clockOf(query: URLSearchParams, receivedAt: number): { sentAt: number | undefined; skew: number } {
  const sentAt = Number(query.get('t_sent'))
  if (!(sentAt > 0)) return { sentAt: undefined, skew: 0 }
  return { sentAt, skew: Math.abs(receivedAt - sentAt) <= DAY ? receivedAt - sentAt : 0 }
}
