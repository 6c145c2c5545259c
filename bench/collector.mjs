// Events per second the reference collector stores on this machine: `npm run bench:collector`.
// Clients post batches of 20 envelopes over loopback HTTP; the figure is the median of 5 runs.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createCollector } from '../dist/collector.mjs'

const CLIENTS = 20
const BATCHES = 100
const BATCH = 20
const RUNS = 5

const envelope = (id) => ({
  event: 'click-item',
  properties: { rid: 's-0b6e2c1e-8f0a-4e0e-9a53-0c2f3c9c1d11', item_id: '1001', variant_item_id: '1001-38' },
  key: 'bench-key',
  t_client: Date.now(),
  user: { uid: 'V1StGXR8_Z5jdHi6B-myT', sid: 'Uakgb_J5m9g-0JDMbcJqL', ua: 'bench', lang: ['en'] },
  event_id: id
})

async function run(round) {
  const dir = mkdtempSync(join(tmpdir(), 'collector-bench-'))
  const file = join(dir, 'events.ndjson')
  const collector = createCollector({ file, keys: ['bench-key'] })
  const server = createServer((request, response) => collector.handle(request, response))
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${server.address().port}/v3/feedback`
  const started = performance.now()
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, client) => {
      for (let b = 0; b < BATCHES; b++) {
        const body = JSON.stringify(Array.from({ length: BATCH }, (_, i) => envelope(`r${round}-c${client}-b${b}-e${i}`)))
        const response = await fetch(url, { method: 'POST', body })
        if (response.status != 200) throw new Error('collector answered ' + response.status)
        await response.arrayBuffer()
      }
    })
  )
  const seconds = (performance.now() - started) / 1000
  const stored = readFileSync(file, 'utf8').split('\n').filter(Boolean).length
  server.close()
  collector.close()
  rmSync(dir, { recursive: true })
  if (stored != CLIENTS * BATCHES * BATCH) throw new Error(`stored ${stored} events`)
  return stored / seconds
}

const rates = []
for (let round = 0; round < RUNS; round++) rates.push(await run(round))
rates.sort((a, b) => a - b)
console.log(
  `collector: ${CLIENTS} clients × ${BATCHES} batches × ${BATCH} events, median of ${RUNS} runs: ` +
    `${Math.round(rates[RUNS >> 1])} events/s stored (min ${Math.round(rates[0])}, max ${Math.round(rates[RUNS - 1])})`
)
