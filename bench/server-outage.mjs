// The server tracker against a collector that is down for the whole run: 50,000 events
// tracked at once, a local collector answering 503 with Retry-After: 2, six seconds.
// Prints the requests it saw and the heap kept after a collection. Run after `npm run build`:
//   node --expose-gc bench/server-outage.mjs
import { createServer } from 'node:http'
import { createServerTracker } from '../dist/server.mjs'

let requests = 0
const collector = createServer((request, response) => {
  requests++
  request.resume()
  request.on('end', () => response.writeHead(503, { 'retry-after': '2' }).end())
})
await new Promise((resolve) => collector.listen(0, '127.0.0.1', resolve))

const tracker = createServerTracker({ key: 'KEY', endpoint: `http://127.0.0.1:${collector.address().port}/v3/feedback`, onError: () => {} })
const shopper = { uid: 'u', sid: 's', ip: '203.0.113.9', ua: 'Mozilla/5.0' }
for (let n = 0; n < 50000; n++) tracker.track('click-item', { item_id: 'item-' + n, variant_item_id: 'v-' + n }, shopper)
await new Promise((resolve) => setTimeout(resolve, 6000))
globalThis.gc?.()
const heap = process.memoryUsage().heapUsed / 1048576
console.log(`requests in 6 s: ${requests}; heap after GC: ${heap.toFixed(1)} MB; stats: ${JSON.stringify(tracker.stats())}`)
await tracker.close({ timeout: 100 })
collector.close()
