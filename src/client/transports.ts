import { queryString } from './query-string'
import { encode } from '../shared/json'
import type { DiscoveryError } from './types'

/** What a request brought back: the service's JSON, and the HTTP status of an answer that is not a success. */
export interface Answered {
  json: any
  status?: number
}

/** The client's error for a request, as sendNow makes it. */
type Fail = (kind: DiscoveryError['kind'], message: string, status?: number) => DiscoveryError

let jsonpCount = 0

/**
 * A GET with a callback, for services reached by a script element (SPEC "General rules" 3). A
 * script element sends no headers: the key goes in the query beside the fields, in the encoding
 * of the service's own SDK. Encoded before the promise, so that a field the query cannot hold
 * throws here, as it does for a POST.
 */
export function jsonpRequest(url: string, fields: Record<string, unknown>, key: string, signal: AbortSignal): Promise<Answered> {
  jsonpCount += 1
  const callback = '__discoveryFeedback' + jsonpCount
  const src = url + '?' + queryString({ ...fields, key, callback })
  const callbacks = globalThis as Record<string, unknown>
  const script = document.createElement('script')
  return new Promise<Answered>((resolve, reject) => {
    callbacks[callback] = (json: unknown) => resolve({ json })
    // Either way an event, which sendNow's catch reads: a script that did not load as no
    // answer (an event has no message), a cancel as its reason.
    script.onerror = reject
    signal.onabort = reject
    script.src = src
    document.head.append(script)
  }).finally(() => {
    delete callbacks[callback]
    script.remove()
  })
}

/** A POST of the fields as JSON, the key in the X-Key header; an answer that is not JSON fails as `fail` says. */
export function postRequest(url: string, fields: Record<string, unknown>, key: string, signal: AbortSignal, fail: Fail): Promise<Answered> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-key': key },
    body: encode(fields),
    signal
  }).then((response) =>
    response.json().then(
      (json) => ({ json, status: response.ok ? undefined : response.status }),
      () => {
        throw fail('http', 'the answer is not JSON', response.status)
      }
    )
  )
}
