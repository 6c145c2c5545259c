// This module serves the live inspector's routes: its page (/inspector) and its feed
// (/inspector/events), which sends every collector message with its lints as a server-sent event
// and the charts' numbers as `stats` events. Both stay behind the token the server prints
// (access.ts). server.ts mounts them on its server.
import { createHash } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import page from './inspector.html?raw'
import { inspectorAccess } from './access'
import type { Activity, ActivityStats, LintedMessage } from './types'

// The page shows what any client sent. Should a value ever slip past textContent, the policy
// still runs no script and loads nothing but the page's own inline script and style.
const hash = (tag: string) =>
  `'sha256-${createHash('sha256')
    .update(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`).exec(page)![1]!)
    .digest('base64')}'`
const POLICY = `default-src 'none'; script-src ${hash('script')}; style-src ${hash('style')}; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`

const refuse = (response: ServerResponse) =>
  response
    .writeHead(401, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' })
    .end('The inspector needs its token: open the inspector URL its server printed in the terminal (…/inspector?token=…).\n')

/**
 * Returns the messages a feed starts with: a bounded number of them, the newest that fit in half
 * the feed's limit, oldest first, so that a late inspector is not cut off by its own catch-up.
 */
function catchUp(recent: LintedMessage[], maxFeedBytes: number) {
  const kept: LintedMessage[] = []
  let bytes = 0
  for (const message of recent.reverse()) {
    bytes += JSON.stringify(message).length
    if (bytes > maxFeedBytes / 2) break
    kept.unshift(message)
  }
  return kept
}

export interface InspectorOptions {
  activity: Activity
  token: string
  maxFeedBytes?: number | undefined
}

/**
 * Serves /inspector and /inspector/events for `activity` (activity.ts). A feed reader that lets
 * more than `maxFeedBytes` pile up unread is dropped, since otherwise a client that never reads
 * would make the server buffer every event for it, without bound. A dropped EventSource
 * reconnects by itself and catches up from the collector's recent messages.
 */
export function createInspector({ activity, token, maxFeedBytes = 1024 * 1024 }: InspectorOptions) {
  const access = inspectorAccess(token)

  function servePage(request: IncomingMessage, response: ServerResponse, url: URL) {
    if (url.searchParams.has('token')) {
      if (!access.tokenMatches(url.searchParams.get('token'))) return refuse(response)
      // The redirect takes the token out of the address bar and the history, and the cookie
      // stands for it from now on.
      return response.writeHead(303, { location: '/inspector', 'set-cookie': access.setCookie, 'cache-control': 'no-store' }).end()
    }
    if (!access.cookieMatches(request.headers.cookie)) return refuse(response)
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': POLICY }).end(page)
  }

  function streamEvents(request: IncomingMessage, response: ServerResponse, url: URL) {
    // The page's EventSource sends the cookie, and readers such as curl send a `token` query.
    const token = url.searchParams.get('token')
    if (!access.cookieMatches(request.headers.cookie) && !(token != null && access.tokenMatches(token))) return refuse(response)
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
    // Node holds the headers back until the first write; the page shows "live" only once they arrive.
    response.write(': connected\n\n')
    const keepUp = () => {
      if (response.writableLength > maxFeedBytes) response.destroy()
    }
    const send = (message: LintedMessage) => response.write('data: ' + JSON.stringify(message) + '\n\n')
    const sendStats = (stats: ActivityStats) => response.write('event: stats\ndata: ' + JSON.stringify(stats) + '\n\n')
    // A late inspector first sees what arrived before it connected, and the charts as they stand.
    catchUp(activity.recent(), maxFeedBytes).forEach(send)
    sendStats(activity.snapshot())
    const unsubscribe = activity.subscribe((message) => {
      if (response.destroyed) return
      send(message)
      keepUp()
    })
    const unsubscribeStats = activity.subscribeStats((stats) => {
      if (response.destroyed) return
      sendStats(stats)
      keepUp()
    })
    // Proxies close a stream that stays silent; a comment line keeps it open.
    const keepAlive = setInterval(() => {
      response.write(': keep-alive\n\n')
      keepUp()
    }, 15000)
    response.on('close', () => {
      unsubscribe()
      unsubscribeStats()
      clearInterval(keepAlive)
    })
  }

  return { servePage, streamEvents }
}
