// Demo: a store page with the script tag, and a collector that prints what arrives.
import { createServer } from 'node:http'
import { readFileSync } from 'node:fs'

const port = Number(process.env.PORT || 8080)
const host = process.env.HOST || '127.0.0.1'
const script = new URL('../dist/discovery-feedback.min.js', import.meta.url)

const page = `<!doctype html>
<meta charset="utf-8">
<title>discovery-feedback demo</title>
<script>window.discoveryFeedback=window.discoveryFeedback||function(){(discoveryFeedback.q=discoveryFeedback.q||[]).push(arguments)};</script>
<script async src="/discovery-feedback.min.js" data-key="demo-key" data-endpoint="/v3/feedback"></script>
<h1>discovery-feedback demo</h1>
<p>Every click below is an event; the server's console shows what the collector receives.</p>
<button onclick="discoveryFeedback('click-item', { rid: 's-demo', item_id: '42', variant_item_id: '421' })">click-item</button>
<button onclick="discoveryFeedback('add-to-cart', { rid: 's-demo', item_id: '42', variant_item_id: '421', quantity: 1 })">add-to-cart</button>
<button onclick="discoveryFeedback('purchase', { order_id: 'o-' + Date.now(), currency: 'EUR', revenue: 19.9, line_items: [{ item_id: '42', variant_item_id: '421', unit_price: 19.9, quantity: 1 }] })">purchase</button>
<button onclick="discoveryFeedback('flush')">send now</button>
`

const server = createServer((request, response) => {
  if (request.method == 'POST' && request.url == '/v3/feedback') {
    let body = ''
    request.on('data', (chunk) => (body += chunk))
    request.on('end', () => {
      try {
        for (const event of JSON.parse(body)) console.log(event.event, JSON.stringify(event.properties), event.user.uid, event.user.sid)
      } catch {
        console.log('not JSON:', body.slice(0, 200))
      }
      response.writeHead(204).end()
    })
    return
  }
  if (request.url == '/discovery-feedback.min.js') {
    response.writeHead(200, { 'content-type': 'text/javascript' }).end(readFileSync(script))
    return
  }
  response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page)
})

server.listen(port, host, () => console.log(`Demo store: http://${host}:${port}/`))
process.on('SIGINT', () => server.close(() => process.exit(0)))
