import { idle, median, microtasks, page } from './click.mjs'

/*
 * A flush of 1,000 queued click-items: serialising them and splitting them into requests under
 * the 64 KiB keepalive limit, up to the moment the (stubbed) transport has every body. Also the
 * body bytes each event costs on the wire.
 */
export async function flushCost(bundleFile, { runs = 7, events = 1000 } = {}) {
  const { window, wire, close } = page(bundleFile)
  const tracker = window.benchCreateTracker({
    key: 'KEY',
    endpoint: 'https://collector.example/v3/feedback',
    autoViewPage: false,
    // Nothing leaves before the flush being measured.
    maxBatchEvents: 100000,
    flushInterval: 3600000
  })
  const times = []
  let requests = 0
  let bytes = 0
  for (let run = 0; run < runs + 1; run++) {
    for (let i = 0; i < events; i++) tracker.clickItem({ rid: 's-0b5d5b8a', item_id: 'item-' + i, variant_item_id: 'variant-' + i })
    await microtasks()
    await idle(window)
    wire.length = 0
    const start = performance.now()
    await tracker.flush()
    times.push(performance.now() - start)
    requests = wire.length
    bytes = wire.reduce((sum, request) => sum + request.bytes, 0)
    await idle(window)
  }
  tracker.destroy()
  close()
  return { ms: median(times.slice(1)), requests, bytesPerEvent: bytes / events }
}
