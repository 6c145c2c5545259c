// @vitest-environment node
// The relay on a real Redis Cluster of its own (redis-cluster.ts: six redis-server processes,
// three masters and three replicas): the store through each cluster client a shop may hand it,
// relay processes on the relay guide's cluster stores (recipes/cluster-store*.mjs), and a master
// killed with SIGKILL while events flow. The sender speaks the tracker's protocol (instances-driver.ts).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Cluster } from 'ioredis'
import { createCluster } from 'redis'
import { createCluster as createClusterV4 } from 'redis-v4'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { redisStore, type RedisClient } from '../../src/relay'
import { createServerTracker } from '../../src/server'
import { orderEventId } from '../../src/shared/order-event-id'
import { createMapping } from '../../src/shopify/events'
import { checkoutCompleted, sampleOrder } from '../shopify/events'
import { batchesOf, createSender, type Envelope, post, type RelayInstance, sinkCounts, startRelay, twice } from './instances-driver'
import { startCluster, type RedisCluster } from './redis-cluster'
import { sleep } from '../support/wait'

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

/** `promise`, or a failure that names `what` once `ms` passed. */
function withinMs<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(what + ' were not all answered 2xx within ' + ms + ' ms')), ms)))
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
}

/**
 * Delivers each batch to both relays, the second once the first answered, as the tracker's
 * resend does after an answer it lost; `workers` batches at a time, the first relay alternating.
 */
async function deliverToBoth(sender: ReturnType<typeof createSender>, label: string, batches: Envelope[][], workers: number, afterBatch?: () => void) {
  let next = 0
  await Promise.all(
    Array.from({ length: workers }, async () => {
      for (let index = next++; index < batches.length; index = next++) {
        await sender.deliver(`${label}-${index}-first`, batches[index], index % 2)
        await sender.deliver(`${label}-${index}-second`, batches[index], (index + 1) % 2)
        afterBatch?.()
      }
    })
  )
}

// Each cluster client a shop may hand the store, connected to the test's cluster as the relay guide's recipes connect them.
const CLUSTER_CLIENTS: Record<string, () => Promise<{ client: RedisClient; close(): Promise<unknown> }>> = {
  'node-redis 5 createCluster': async () => {
    const client = createCluster({ rootNodes: cluster.rootNodes.map(({ url }) => ({ url })), defaults: { disableOfflineQueue: true } })
    client.on('error', () => {})
    await client.connect()
    return { client, close: async () => client.destroy() }
  },
  'ioredis Cluster': async () => {
    const client = new Cluster(cluster.rootNodes.map(({ host, port }) => ({ host, port })))
    client.on('error', () => {})
    return { client, close: async () => client.disconnect() }
  }
}

describe.each(Object.keys(CLUSTER_CLIENTS))('redisStore over %s', (name) => {
  it('claims, delivers, looks up and rate-limits batches of every shape across 16 slots, each script on one slot, the keys on all three masters', async () => {
    const { client, close } = await CLUSTER_CLIENTS[name]()
    try {
      const [first, second] = [redisStore(client, { shards: 16 }), redisStore(client, { shards: 16 })]
      // Keys as the relay makes them (dedupe.ts): events, a purchase and its order's keys; batches of 1 to 500 ids.
      const ids = Array.from({ length: 500 }, (_, index) => `k1.e.${index % 7}.owner.id-${index}`)
      const purchase = ['k1.p.o1.o2.order.abc', 'k1.o.order.abc', 'k1.s.order.abc']
      for (const [index, size] of [1, 2, 16, 500].entries()) {
        const batch = ids.slice(0, size).map((id) => id + '-' + index)
        expect(await first.claim(batch, 'token-' + index, 15000)).toEqual(batch.map(() => 'new'))
        expect(await second.claim([...batch].reverse(), 'other-' + index, 15000)).toEqual(batch.map(() => 'claimed'))
        await first.delivered(
          batch,
          'token-' + index,
          batch.map((_, position) => 'owner-' + position)
        )
        expect(await second.lookup(batch)).toEqual(batch.map((_, position) => 'owner-' + position))
        expect(await second.claim(batch, 'other-' + index, 15000)).toEqual(batch.map(() => 'delivered'))
      }
      expect(await first.claim(purchase, 'token-p', 15000)).toEqual(['new', 'new', 'new'])
      await first.release(purchase, 'token-p')
      expect(await second.claim(purchase, 'token-q', 15000)).toEqual(['new', 'new', 'new'])
      // One client's bucket, whatever slot its address lands in.
      for (const address of ['198.51.100.7', '203.0.113.9', '2001:db8::1']) {
        expect(await first.take!(address, 10, { burst: 10, perSecond: 1 })).toBe(0)
        expect(await second.take!(address, 1, { burst: 10, perSecond: 1 })).toBeGreaterThan(0)
      }
      const keys = await keysByMaster()
      expect(keys.size).toBe(3)
      for (const count of keys.values()) expect(count).toBeGreaterThan(50)
    } finally {
      await close()
    }
  })
})

describe('redisStore refusing a client it cannot use, when it is made', () => {
  it("names node-redis 4's cluster client, which cannot refresh its map of slots, and a client with neither sendCommand nor call", async () => {
    const old = createClusterV4({ rootNodes: cluster.rootNodes.map(({ url }) => ({ url })) })
    expect(() => redisStore(old as never)).toThrow(
      "discovery-feedback: relay: redisStore(client): this node-redis cluster client cannot refresh its map of slots after a failover (node-redis 4's keeps it private, and it refreshes only on MOVED): use node-redis 5's createCluster or ioredis's Cluster"
    )
    expect(() => redisStore({ get: async () => null } as never)).toThrow(
      'discovery-feedback: relay: redisStore(client): the client has neither sendCommand() (node-redis) nor call() (ioredis): give a node-redis or ioredis client'
    )
    expect(() => redisStore(undefined as never)).toThrow(
      'discovery-feedback: relay: redisStore(client): client is undefined: give a node-redis or ioredis client'
    )
  })
})

describe('two relay processes on Redis Cluster, one through node-redis 5, one through ioredis', () => {
  it('stores 10,000 events, each batch posted to both, once each, every answer 2xx, the keys on all three masters', async () => {
    const { urls, sinkFile, instances } = await relays(['node-redis', 'ioredis'])
    const batches = batchesOf('ten-thousand', 200)
    const sender = createSender(urls)
    await withinMs(deliverToBoth(sender, 'batch', batches, 16), 60000, 'the 10,000 events')

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

describe('batches posted to two relays at the same moment, on the cluster', () => {
  it('stores each event once: a claim per slot, whichever relay wins each; the other is told to come back, then counts them duplicates', async () => {
    // The sink takes 200 ms, so that the two requests of a batch overlap.
    const { urls, sinkFile } = await relays(['node-redis', 'ioredis'], { SINK_DELAY_MS: '200' })
    const batches = batchesOf('racing', 20)
    const sender = createSender(urls)
    const finals = await Promise.all(
      batches.flatMap((events, index) => [sender.deliver(`racing-${index}-a`, events, 0), sender.deliver(`racing-${index}-b`, events, 1)])
    )
    const counts = sinkCounts(sinkFile)
    expect(counts.size).toBe(1000)
    expect(twice(counts)).toEqual([])
    // Every answer counts what its request stored, 503s included: 1,000 in all, and each batch's final answer 2xx.
    expect(sender.attempts.reduce((sum, attempt) => sum + (attempt.accepted || 0), 0)).toBe(1000)
    expect(finals.map((attempt) => attempt.status)).toEqual(finals.map(() => 200))
    // Whichever found events claimed by the other was told 503 + Retry-After, never 2xx with something unstored.
    const held = sender.attempts.filter((attempt) => attempt.status != 200)
    expect(held.length).toBeGreaterThan(0)
    expect(held.filter((attempt) => attempt.status != 503 || attempt.retryAfter != '2')).toEqual([])
  }, 60000)
})

describe("one purchase from the thank-you template, the Shopify pixel and the shop's server, over two relays on the cluster", () => {
  it("reaches the sink once per order: the template's copy, then the pixel's and the server's counted duplicates", async () => {
    const SECRET = 'the-shops-server-secret-0123456789'
    const { urls, sinkFile } = await relays(['node-redis', 'ioredis'], { SERVER_SECRETS: SECRET })
    const { purchaseOf } = createMapping()
    const answers: string[] = []
    // 30 orders, so that their keys fall in every master's slots; the copies of one order in turn, as a checkout sends them.
    await Promise.all(
      Array.from({ length: 30 }, async (_, index) => {
        const order = sampleOrder({ id: 'gid://shopify/OrderIdentity/55123456' + String(index).padStart(5, '0') })
        const user = { uid: 'shopper-' + index, sid: 'session-' + index }
        const pixel = purchaseOf(checkoutCompleted(order).checkout, () => {})
        // The thank-you template's purchase() has the order's own figures; the pixel's come from Shopify's checkout.
        const template = { ...pixel, line_items: pixel.line_items.slice(0, 1) }
        const envelopeOf = (properties: object) => ({
          event: 'purchase',
          properties,
          key: 'KEY',
          t_client: Date.now(),
          user,
          event_id: orderEventId('KEY', pixel.order_id)
        })
        for (const [copy, properties, url] of [
          ['template', template, urls[index % 2]],
          ['pixel', pixel, urls[(index + 1) % 2]]
        ] as const) {
          const answer = await post(url, [envelopeOf(properties)])
          answers.push(`${copy} ${answer.status} ${answer.body.accepted} ${answer.body.duplicates}`)
        }
        const server = createServerTracker({ key: 'KEY', endpoint: urls[index % 2] + '/collect', secret: SECRET })
        server.track('purchase', pixel, { ...user, ip: '203.0.113.9', ua: 'Mozilla/5.0' })
        await server.close()
        answers.push(`server sent ${server.stats().sent}`)
      })
    )
    expect(answers.sort()).toEqual([...Array(30).fill('pixel 200 0 1'), ...Array(30).fill('server sent 1'), ...Array(30).fill('template 200 1 0')])
    const counts = sinkCounts(sinkFile)
    expect(counts.size).toBe(30)
    expect(twice(counts)).toEqual([])
    expect((await keysByMaster()).size).toBe(3)
    for (const count of (await keysByMaster()).values()) expect(count).toBeGreaterThan(0)
  })
})

describe('a master killed with SIGKILL while 5,000 events flow', () => {
  it('is followed to its replica within seconds: 503 with Retry-After meanwhile, every event in the sink, twice only if in flight at the crash; back as a replica, 1,000 more once', async () => {
    const { urls, sinkFile, instances } = await relays(['node-redis', 'ioredis'])
    const batches = batchesOf('failover', 100)
    const sender = createSender(urls)
    const [victim] = await cluster.masters()
    const node = cluster.nodes.find((candidate) => candidate.port == victim.port)!
    let answered = 0
    let killedAt = 0
    let promotedAt = 0
    let killing: Promise<void> | undefined
    const flow = deliverToBoth(sender, 'batch', batches, 16, () => {
      if (++answered == 30) {
        killedAt = Date.now()
        killing = node.stop('SIGKILL').then(async () => {
          while (!(await cluster.masters()).some((master) => master.port != victim.port && master.slots.some(([from]) => from == victim.slots[0][0])))
            await sleep(20)
          promotedAt = Date.now()
        })
      }
    })
    // The claims' time is the relay's default, 30 s: a batch that waited them out would be late.
    await withinMs(flow, 45000, 'the 5,000 events')
    const doneAt = Date.now()
    await killing

    const counts = sinkCounts(sinkFile)
    expect(counts.size).toBe(5000)
    expect(new Set(counts.keys())).toEqual(new Set(idsOf(batches)))
    expect(Math.max(...counts.values())).toBeLessThanOrEqual(2)
    // Its replica took its slots.
    const masters = await cluster.masters()
    expect(masters.map((master) => master.port)).not.toContain(victim.port)
    expect(masters.flatMap((master) => master.slots)).toContainEqual(victim.slots[0])
    // Every answer was 2xx, or 503 with Retry-After while the slot had no master; both relays
    // were refused some, and both stored events again after the crash.
    const refused = sender.attempts.filter((attempt) => attempt.status != 200)
    expect(refused.filter((attempt) => attempt.status != 503 || !attempt.retryAfter)).toEqual([])
    expect(new Set(refused.filter((attempt) => attempt.endedAt > killedAt).map((attempt) => attempt.instance))).toEqual(new Set([0, 1]))
    const storedAfter = sender.attempts.filter((attempt) => attempt.startedAt > killedAt && attempt.accepted)
    expect(new Set(storedAfter.map((attempt) => attempt.instance))).toEqual(new Set([0, 1]))
    // Seconds, not the claims' 30: the store followed the promotion, and what a request had
    // claimed or delivered before its store failed was let go, or marked, once it was back.
    expect(doneAt - killedAt).toBeLessThan(15000)
    // The window: Redis replicates asynchronously, so what the master acknowledged in its last
    // moment and had not yet passed to its replica died with it. An event stored twice is one of
    // a batch a request carried at the crash, or answered in the quarter second before it.
    const duplicated = twice(counts)
    const atCrash = sender.attempts.filter((attempt) => attempt.startedAt <= killedAt && attempt.endedAt >= killedAt - 250)
    const inWindow = new Set(atCrash.flatMap((attempt) => attempt.ids))
    expect(duplicated.filter((id) => !inWindow.has(id))).toEqual([])
    console.log(
      `SIGKILL of a master: its replica took over ${promotedAt - killedAt} ms after the crash; the last batch answered ${doneAt - killedAt} ms after it; ${refused.length} answers 503; ` +
        `${duplicated.length} events twice of ${inWindow.size} in flight at the crash`
    )

    // The old master back, empty: it rejoins as a replica of the node that took its slots, and the relays go on as before.
    await node.start()
    await cluster.healthy()
    expect(await cluster.command(victim.port, 'ROLE')).toMatch(/^slave/)
    const more = batchesOf('after', 20)
    const after = createSender(urls)
    await withinMs(deliverToBoth(after, 'after', more, 8), 30000, 'the 1,000 events after')
    const countsAfter = sinkCounts(sinkFile)
    expect(countsAfter.size).toBe(6000)
    expect(idsOf(more).filter((id) => countsAfter.get(id) != 1)).toEqual([])
    expect(after.attempts.filter((attempt) => attempt.status != 200)).toEqual([])
    expect(instances.every((relay) => relay.child.exitCode == null)).toBe(true)
  }, 120000)
})
