import { get, type IncomingMessage } from 'node:http'

/**
 * Reads the inspector's event stream as a browser's EventSource would, signed in with the
 * feed's `token` query. It collects the collector's messages (`data:`) and the charts' stats
 * (`event: stats`).
 */
export async function readFeed(origin: string, token: string) {
  const messages: any[] = []
  const stats: any[] = []
  let closed = false
  const response = await new Promise<IncomingMessage>((resolve) => get(origin + '/inspector/events?token=' + encodeURIComponent(token), resolve))
  let pending = ''
  response.setEncoding('utf8')
  response.on('data', (chunk: string) => {
    pending += chunk
    const blocks = pending.split('\n\n')
    pending = blocks.pop()!
    for (const block of blocks) {
      if (block.startsWith('data: ')) messages.push(JSON.parse(block.slice(6)))
      if (block.startsWith('event: stats\ndata: ')) stats.push(JSON.parse(block.slice(19)))
    }
  })
  response.on('close', () => {
    closed = true
  })
  return { status: response.statusCode, messages, stats, isClosed: () => closed, close: () => response.destroy() }
}
