// The POST both page-side senders make: the storefront tracker's delivery and the Shopify pixel's.
import { errorMessageIn } from './http'

/** The collector's answer to a request. */
export interface Answer {
  /** The HTTP status; 0 when there was none (offline, refused, CORS not allowed). */
  status: number
  retryAfter?: string | null
  /** Which of the event ids asked about (`?unconfirmed=`) the collector lacks, if it said. */
  missing?: unknown
  /** The collector's own words for a refusal, where the sender read them. */
  message?: string
}

/**
 * POSTs a body and resolves the collector's answer. The defaults of fetch are what we need:
 * CORS mode so the answer can be read, and a string body goes as text/plain;charset=UTF-8
 * (Fetch standard, "extract a body"), a safelisted type, so a cross-origin collector gets it
 * without a preflight. keepalive lets it finish after the page leaves; it shares sendBeacon's
 * 64 KiB budget. Credentials go the default way, 'same-origin': a collector on another origin
 * gets no cookie and sets none, while a relay on the shop's own origin (discovery-feedback/relay)
 * sees the uid cookie and renews it from the server, which Safari does not cap at 7 days.
 * `readBody`: the request asked something of its answer (`?unconfirmed=`); an answer of 400 or
 * more is read anyway, for the collector's words.
 */
export async function post(url: string, body: string, keepalive: boolean, readBody?: boolean): Promise<Answer> {
  // A fetch that a page replaced may throw, or return something that is not a response: the
  // catch turns either into no answer. fetch is called before the first await, so before the
  // page can go.
  try {
    const response = await fetch(url, { method: 'POST', body, keepalive })
    // The body is read only when the request asked something of it (`missing`), or when the
    // collector refused, to say why in the drop's message: reading and parsing an answer
    // nobody needs is main-thread work on every send.
    const json = readBody || response.status >= 400 ? await response.json().catch(() => undefined) : undefined
    return { status: response.status, retryAfter: response.headers.get('retry-after'), missing: json?.missing, message: errorMessageIn(json) }
  } catch {
    return { status: 0 }
  }
}
