import { openBodies } from './body-limits'
import { readEnvelopes, type Intake } from './intake'
import type { RateLimiter } from './rate-limit'
import { failure, json } from './responses'

interface AdmissionOptions {
  maxBodyBytes: number
  bodyTimeoutMs: number
  limiter: RateLimiter
}

// A client with as many bodies arriving as it may have is asked to come back after this.
const BUSY_RETRY_SECONDS = 1

/**
 * Makes the function that lets a request's envelopes in, in the order that keeps a client from
 * holding more of the relay than its share: its bodies arriving at once counted (body-limits.ts),
 * the bytes it declares paid for before its body is read, the body read within its size and
 * time, and then what else it costs paid for (rate-limit.ts).
 */
export function admission({ maxBodyBytes, bodyTimeoutMs, limiter }: AdmissionOptions) {
  const bodies = openBodies()

  /**
   * The request's envelopes, or the answer it gets instead. `client` is the bucket it counts
   * against; undefined for the shop's own server sender, which no limit holds.
   */
  return async function admit(
    request: Request,
    client: string | undefined,
    query: URLSearchParams,
    headers: Record<string, string>
  ): Promise<Response | Extract<Intake, { envelopes: unknown[] }>> {
    const refused = (intake: Intake) => ('status' in intake ? json(intake.status, failure(intake.message), headers) : intake)
    if (client === undefined) return refused(await readEnvelopes(request, maxBodyBytes, bodyTimeoutMs))
    if (!bodies.enter(client)) {
      const message = 'too many requests from this address at once: come back in ' + BUSY_RETRY_SECONDS + ' s'
      return json(429, failure(message), { ...headers, 'retry-after': String(BUSY_RETRY_SECONDS) })
    }
    let intake: Intake
    let paid: number | Response
    try {
      paid = await limiter.beforeBody(client, Number(request.headers.get('content-length')), maxBodyBytes, headers)
      if (paid instanceof Response) return paid
      intake = await readEnvelopes(request, maxBodyBytes, bodyTimeoutMs)
    } finally {
      bodies.leave(client)
    }
    if ('status' in intake) return refused(intake)
    return (await limiter.afterBody(client, paid, intake.envelopes.length, intake.bytes, query, headers)) || intake
  }
}
