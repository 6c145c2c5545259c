// A TCF CMP in an ancestor frame, reached by postMessage through its `__tcfapiLocator` frame.

/** The CMP API's call signature (CMP API v2, `__tcfapi(command, version, callback, parameter)`). */
export type TcfApi = (command: string, version: number, callback: (data: never, success: boolean) => void, parameter?: unknown) => void

/** A CMP API reached across frames, with the message listener it added to this window. */
export interface FramedTcfApi {
  api: TcfApi
  close(): void
}

/** The name of the empty frame a CMP (or its stub) puts in its window to say "ask me here". */
const LOCATOR = '__tcfapiLocator'

/**
 * The nearest window, this one or an ancestor, that holds a frame named `__tcfapiLocator`
 * (CMP API v2, "How can vendors that use iframes call the CMP API from an iframe?"). A frame's
 * children are found by name even across origins; a throw on the way (an odd embedder) ends
 * the search at that window.
 */
function locatorHost(): Window | undefined {
  let candidate: Window = window
  for (;;) {
    try {
      if ((candidate.frames as unknown as Record<string, unknown>)[LOCATOR]) return candidate
    } catch {
      // Not readable from here: look further up.
    }
    if (candidate == window.top) return
    candidate = candidate.parent
  }
}

/**
 * The CMP API of a CMP in an ancestor frame, when there is one: each call is posted to the
 * window that holds the locator as `{ __tcfapiCall: { command, version, parameter, callId } }`,
 * and each `{ __tcfapiReturn: { returnValue, success, callId } }` that this window receives
 * from that window goes to the call's callback (an addEventListener's, on every change). A
 * message from any other window, or not shaped so, is ignored: any frame can post here.
 */
export function framedTcfApi(): FramedTcfApi | undefined {
  // In the top window, or with the locator in this very window, the CMP answers through __tcfapi.
  if (window == window.top) return
  const host = locatorHost()
  if (!host || host == window) return
  const callbacks = new Map<string, (data: never, success: boolean) => void>()
  // Ours among every vendor's calls in this frame: each listens to every answer and picks its own by callId.
  const callIdPrefix = 'discovery-feedback:' + Math.random().toString(36).slice(2) + ':'
  let calls = 0

  const answered = (event: MessageEvent) => {
    if (event.source !== host) return
    let message: unknown = event.data
    if (typeof message == 'string') {
      try {
        message = JSON.parse(message)
      } catch {
        return
      }
    }
    const answer = message && typeof message == 'object' ? (message as { __tcfapiReturn?: unknown }).__tcfapiReturn : undefined
    if (!answer || typeof answer != 'object') return
    const { returnValue, success, callId } = answer as { returnValue?: unknown; success?: unknown; callId?: unknown }
    const callback = typeof callId == 'string' ? callbacks.get(callId) : undefined
    if (callback) callback(returnValue as never, success === true)
  }
  addEventListener('message', answered)

  const api: TcfApi = (command, version, callback, parameter) => {
    const callId = callIdPrefix + ++calls
    callbacks.set(callId, callback)
    // '*': the call carries no secret, and the CMP's origin is not known to the frame.
    host.postMessage({ __tcfapiCall: { command, version, parameter, callId } }, '*')
  }
  return { api, close: () => removeEventListener('message', answered) }
}
