// @vitest-environment node
// The relay on a real Redis Cluster of its own (redis-cluster.ts: six redis-server processes,
// three masters and three replicas): the store through each cluster client a shop may hand it,
// relay processes on the relay guide's cluster stores (recipes/cluster-store*.mjs), and a master
// killed with SIGKILL while events flow. The sender speaks the tracker's protocol (instances-driver.ts).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { batchesOf, createSender, type Envelope, type RelayInstance, sinkCounts, startRelay, twice } from './instances-driver'
import { startCluster, type RedisCluster } from './redis-cluster'

let cluster: RedisCluster
let running: RelayInstance[] = []
const dir = mkdtempSync(join(tmpdir(), 'relay-cluster-'))
let files = 0

beforeAll(async () => {
  cluster = await startCluster()
}, 60000)
afterEach(async () => {
  await Promise.all(running.map((relay) => relay.stop('SIGKILL')))
  running = []
  // Each test starts from an empty cluster; replicas follow their masters.
  for (const master of await cluster.masters()) expect(await cluster.command(master.port, 'FLUSHALL')).toBe('OK')
})
afterAll(async () => {
  await cluster?.close()
  rmSync(dir, { recursive: true, force: true })
})

/** Relay processes on the cluster, one per client named ('node-redis' or 'ioredis'), sharing one NDJSON sink. */
async function relays(clients: ('node-redis' | 'ioredis')[], env: Record<string, string> = {}) {
  const sinkFile = join(dir, `sink-${++files}.ndjson`)
  const nodes = cluster.rootNodes.map((node) => node.url).join(',')
  const started = await Promise.all(
    clients.map((client) => startRelay({ REDIS_CLUSTER_NODES: nodes, REDIS_CLIENT: client, SINK_FILE: sinkFile, LOG_ERRORS: '1', ...env }))
  )
  running.push(...started)
  return { instances: started, urls: started.map((relay) => relay.url), sinkFile }
}

/** How many keys each master holds now, by port. */
async function keysByMaster(): Promise<Map<number, number>> {
  const masters = await cluster.masters()
  return new Map(await Promise.all(masters.map(async (master) => [master.port, Number(await cluster.command(master.port, 'DBSIZE'))] as [number, number])))
}

const idsOf = (batches: Envelope[][]) => batches.flat().map((event) => event.event_id)

/**
 * Delivers each batch to both relays, the second once the first answered, as the tracker's
 * resend does after an answer it lost; `workers` batches at a time, the first relay alternating.
 */
async function deliverToBoth(sender: ReturnType<typeof createSender>, label: string, batches: Envelope[][], workers: number, afterEach?: () => void) {
  let next = 0
  await Promise.all(
    Array.from({ length: workers }, async () => {
      for (let index = next++; index < batches.length; index = next++) {
        await sender.deliver(`${label}-${index}-first`, batches[index], index % 2)
        await sender.deliver(`${label}-${index}-second`, batches[index], (index + 1) % 2)
        afterEach?.()
      }
    })
  )
}

describe('two relay processes on Redis Cluster, one through node-redis 5, one through ioredis', () => {
  it('stores 10,000 events, each batch posted to both, once each, every answer 2xx, the keys on all three masters', async () => {
    const { urls, sinkFile, instances } = await relays(['node-redis', 'ioredis'])
    const batches = batchesOf('ten-thousand', 200)
    const sender = createSender(urls)
    await deliverToBoth(sender, 'batch', batches, 16)

    const counts = sinkCounts(sinkFile)
    expect(counts.size).toBe(10000)
    expect(twice(counts)).toEqual([])
    expect(new Set(counts.keys())).toEqual(new Set(idsOf(batches)))
    expect(sender.attempts.filter((attempt) => attempt.status != 200)).toEqual([])
    // Each batch stored by one relay and counted a duplicate by the other; both relays stored some.
    expect(sender.attempts.reduce((sum, attempt) => sum + attempt.accepted!, 0)).toBe(10000)
    expect(sender.attempts.reduce((sum, attempt) => sum + attempt.duplicates!, 0)).toBe(10000)
    expect(new Set(sender.attempts.filter((attempt) => attempt.accepted).map((attempt) => attempt.instance))).toEqual(new Set([0, 1]))
    expect((await Promise.all(instances.map((relay) => relay.stats()))).map((stats) => stats.errors)).toEqual([0, 0])
    // One key per event id (and the rate limit's bucket), spread over every master by the 16 slots.
    const keys = await keysByMaster()
    expect(keys.size).toBe(3)
    expect([...keys.values()].reduce((sum, count) => sum + count, 0)).toBeGreaterThanOrEqual(10000)
    for (const count of keys.values()) expect(count).toBeGreaterThan(1000)
    console.log(`10,000 events over the cluster: keys by master ${[...keys.values()].join(', ')}`)
  }, 90000)
})
