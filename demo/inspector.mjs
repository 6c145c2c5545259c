// The live inspector's feed: every collector message as a server-sent event.
import { readFileSync } from 'node:fs'

const page = readFileSync(new URL('./inspector.html', import.meta.url))

export function serveInspector(response) {
  response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page)
}

export function streamEvents(collector, request, response) {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
  // Node holds the headers back until the first write; the page shows "live" only once they arrive.
  response.write(': connected\n\n')
  const send = (message) => response.write('data: ' + JSON.stringify(message) + '\n\n')
  // A late inspector first sees what arrived before it connected.
  collector.recent().forEach(send)
  const unsubscribe = collector.subscribe(send)
  // Proxies close a stream that stays silent; a comment line keeps it open.
  const keepAlive = setInterval(() => response.write(': keep-alive\n\n'), 15000)
  request.on('close', () => {
    unsubscribe()
    clearInterval(keepAlive)
  })
}
