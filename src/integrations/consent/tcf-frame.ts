// A TCF CMP in an ancestor frame, reached by postMessage through its `__tcfapiLocator` frame.

/**
 * The CMP API's call signature (CMP API v2, `__tcfapi(command, version, callback, parameter)`),
 * the same for the page's own `__tcfapi` and for the one reached across frames here.
 */
export type TcfApi = (command: string, version: number, callback: (data: never, success: boolean) => void, parameter?: unknown) => void

/** A CMP API reached across frames, with the message listener it added to this window. */
export interface FramedTcfApi {
  api: TcfApi
  close(): void
}

/** The name of the empty frame a CMP (or its stub) puts in its window to say "ask me here". */
const LOCATOR = '__tcfapiLocator'

// The most calls kept waiting for an answer. A CMP that loses some (a call posted before its
// page listened) cannot make them pile up: beyond this, the oldest is forgotten.
const MAX_WAITING = 50

type Callback = (data: never, success: boolean) => void

/**
 * The nearest window, this one or an ancestor, that holds a frame named `__tcfapiLocator`
 * (CMP API v2, "How can vendors that use iframes call the CMP API from an iframe?"). A frame's
 * children are found by name even across origins; a window that throws on the way (an odd
 * embedder) is passed over, and the search goes on above it.
 */
function locatorHost(): Window | undefined {
  let candidate: Window = window
  for (;;) {
    try {
      if ((candidate.frames as Window & Record<string, unknown>)[LOCATOR]) return candidate
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
 * from that window goes to the call's callback. A message from any other window, or not shaped
 * so, is ignored: any frame can post here.
 *
 * A call is answered once, except `addEventListener`, whose callback hears every change until
 * `removeEventListener` is called with the listenerId its first answer gave.
 */
export function framedTcfApi(): FramedTcfApi | undefined {
  // In the top window, or with the locator in this very window, the CMP answers through __tcfapi.
  if (window == window.top) return
  const host = locatorHost()
  if (!host || host == window) return
  // The calls waiting for answers, by callId; and the callId of each listener the CMP named.
  const waiting = new Map<string, { command: string; callback: Callback }>()
  const listeners = new Map<number, string>()
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
    const call = typeof callId == 'string' ? waiting.get(callId) : undefined
    if (!call) return
    if (call.command != 'addEventListener') {
      waiting.delete(callId as string)
    } else {
      const listenerId = (returnValue as { listenerId?: unknown } | null)?.listenerId
      if (typeof listenerId == 'number') listeners.set(listenerId, callId as string)
    }
    call.callback(returnValue as never, success === true)
  }
  addEventListener('message', answered)

  const api: TcfApi = (command, version, callback, parameter) => {
    // A listener removed hears nothing more, whatever the CMP still posts.
    if (command == 'removeEventListener' && typeof parameter == 'number') {
      const callId = listeners.get(parameter)
      if (callId) waiting.delete(callId)
      listeners.delete(parameter)
    }
    const callId = callIdPrefix + ++calls
    waiting.set(callId, { command, callback })
    if (waiting.size > MAX_WAITING) waiting.delete(waiting.keys().next().value!)
    // '*': the call carries no secret, and the CMP's origin is not known to the frame.
    host.postMessage({ __tcfapiCall: { command, version, parameter, callId } }, '*')
  }
  return { api, close: () => removeEventListener('message', answered) }
}
