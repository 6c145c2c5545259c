import type { clientAddress } from './client-address'
import { checkEnvelope } from './envelopes'
import { asEnvelope, type Intake } from './intake'
import type { BatchReport, RelayEvent } from './types'

/** Who sent a request, and when by our clock: what each of its events is given. */
interface Sender {
  /** Whether the shop's own server sent it (server-senders.ts). */
  server: boolean
  ip: string | undefined
  ua: string | undefined
  receivedAt: number
  /** How far the sender's clock is behind ours, in milliseconds. */
  skew: number
}

/**
 * Makes the function that takes a request's envelopes by the relay's keys (`accepted`) and
 * SPEC's rules. An ip a server sender gives is kept as the privacy setting of `addresses` allows.
 */
export function envelopeAcceptor(accepted: Set<string>, addresses: ReturnType<typeof clientAddress>) {
  /**
   * The events of a request's envelopes that pass the keys and the rules, each with its user's
   * ip and ua as SPEC wants them and its time on our clock; the others go to the batch's report.
   */
  return function acceptEnvelopes(intake: Extract<Intake, { envelopes: unknown[] }>, sender: Sender, batch: BatchReport): RelayEvent[] {
    const events: RelayEvent[] = []
    intake.envelopes.forEach((sent, index) => {
      const { envelope, filled } = asEnvelope(sent, intake.key)
      const checked = checkEnvelope(envelope, accepted)
      if ('error' in checked) return batch.rejected.push({ index, error: checked.error, envelope: sent })
      if (filled) batch.variantsFilled++
      const event = checked.event
      // SPEC "User object": ip and ua default to those of the request, and only the shop's own
      // server senders may give others (server-senders.ts). A given ip is under the same privacy setting.
      const givenIp = sender.server ? addresses.allowed(event.user.ip) : undefined
      const givenUa = sender.server ? event.user.ua : undefined
      if (givenIp || sender.ip) event.user.ip = givenIp || sender.ip
      else delete event.user.ip
      if (givenUa || sender.ua) event.user.ua = givenUa || sender.ua
      else delete event.user.ua
      events.push({ ...event, received_at: sender.receivedAt, t_corrected: event.t_client + sender.skew })
    })
    return events
  }
}
