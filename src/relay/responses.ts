/** A JSON answer with the headers the request has earned so far (CORS, Retry-After, the uid cookie). */
export const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } })

/** The body of an answer that is no success: the error's message, beside what else the sender is told. */
export const failure = (message: string, more: object = {}) => ({ error: { message }, ...more })

// A batch whose events another request holds is asked to come back after this: that request's
// sink is running, and has answered by then in all likelihood.
export const CLAIMED_RETRY_SECONDS = 2
