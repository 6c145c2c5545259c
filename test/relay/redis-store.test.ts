// @vitest-environment node
// The DeliveryStore contract, kept by redisStore() through each client a shop may hand it
// (node-redis 5 and 4, ioredis 5) against a real redis-server, and by memoryStore() beside them.
import { readFileSync } from 'node:fs'
import Redis from 'ioredis'
import { createClient } from 'redis'
import { createClient as createClientV4 } from 'redis-v4'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { memoryStore, redisStore, type DeliveryStore, type RedisClient } from '../../src/relay'
import { startRedis, type RedisServer } from './redis-server'
import { sleep, waitFor } from '../support/wait'

let redis: RedisServer
const opened: { close(): Promise<unknown> }[] = []

beforeAll(async () => {
  redis = await startRedis()
})
afterAll(async () => {
  for (const client of opened) await client.close().catch(() => {})
  await redis?.close()
})

// Each kind of client, connected; `raw` sends one command and returns its reply, to look at the keys.
type Connected = { client: RedisClient; raw: (...args: string[]) => Promise<unknown> }
const CLIENTS: Record<string, () => Promise<Connected>> = {
  'node-redis 5': async () => {
    const client = createClient({ url: redis.url })
    client.on('error', () => {})
    await client.connect()
    opened.push({ close: async () => client.destroy() })
    return { client, raw: (...args) => client.sendCommand(args) }
  },
  'node-redis 4': async () => {
    const client = createClientV4({ url: redis.url })
    client.on('error', () => {})
    await client.connect()
    opened.push({ close: () => client.disconnect() })
    return { client, raw: (...args) => client.sendCommand(args) }
  },
  ioredis: async () => {
    const client = new Redis(redis.port, '127.0.0.1', { lazyConnect: true })
    client.on('error', () => {})
    await client.connect()
    opened.push({ close: async () => client.disconnect() })
    return { client, raw: (...args) => client.call(args[0], ...args.slice(1)) }
  }
}

let prefixes = 0
/** Two stores over two connections that share one keyspace (a fresh prefix per test), as two relay instances do. */
type Pair = { first: DeliveryStore; second: DeliveryStore; raw?: Connected['raw']; prefix?: string }
const KINDS: Record<string, (options?: { keepDays?: number; shards?: number }) => Promise<Pair>> = {
  // One process: both "instances" are the one store.
  memoryStore: async () => {
    const store = memoryStore()
    return { first: store, second: store }
  }
}
for (const [name, connect] of Object.entries(CLIENTS)) {
  KINDS['redisStore over ' + name] = async (options = {}) => {
    const [one, two] = [await connect(), await connect()]
    const prefix = `t${++prefixes}:`
    return { first: redisStore(one.client, { prefix, ...options }), second: redisStore(two.client, { prefix, ...options }), raw: one.raw, prefix }
  }
}

describe.each(Object.keys(KINDS))('%s', (kind) => {
  const pair = (options?: { keepDays?: number }) => KINDS[kind](options)

  it("claims an id once: 'new' for the first request, 'claimed' for another while it runs, 'delivered' once its sink had it", async () => {
    const { first, second } = await pair()
    expect(await first.claim(['a', 'b'], 'token-1', 15000)).toEqual(['new', 'new'])
    expect(await second.claim(['b', 'a', 'c'], 'token-2', 15000)).toEqual(['claimed', 'claimed', 'new'])
    // The same request asking again is no exception: a claim is held, whoever asks.
    expect(await first.claim(['a'], 'token-1', 15000)).toEqual(['claimed'])
    await first.delivered(['a', 'b'], 'token-1')
    expect(await second.claim(['a', 'b', 'c'], 'token-3', 15000)).toEqual(['delivered', 'delivered', 'claimed'])
    await second.delivered(['c'], 'token-2')
    expect(await first.claim(['c'], 'token-4', 15000)).toEqual(['delivered'])
    expect(await first.claim([], 'token-5', 15000)).toEqual([])
  })

  it('lets a retry claim the ids a failed request released, and only that request can release them', async () => {
    const { first, second } = await pair()
    expect(await first.claim(['a', 'b'], 'token-1', 15000)).toEqual(['new', 'new'])
    // Another request's release leaves the claim alone.
    await second.release(['a', 'b'], 'token-2')
    expect(await second.claim(['a', 'b'], 'token-2', 15000)).toEqual(['claimed', 'claimed'])
    await first.release(['a', 'b'], 'token-1')
    expect(await second.claim(['a', 'b'], 'token-2', 15000)).toEqual(['new', 'new'])
    // A release after delivery does not forget the delivery.
    await second.delivered(['a'], 'token-2')
    await second.release(['a'], 'token-2')
    expect(await first.claim(['a'], 'token-3', 15000)).toEqual(['delivered'])
  })

  it('lets a claim lapse after its ttl, as when the instance holding it died', async () => {
    const { first, second } = await pair()
    expect(await first.claim(['a'], 'token-1', 1000)).toEqual(['new'])
    expect(await second.claim(['a'], 'token-2', 1000)).toEqual(['claimed'])
    await sleep(1500)
    expect(await second.claim(['a'], 'token-2', 15000)).toEqual(['new'])
    expect(await first.claim(['a'], 'token-1', 15000)).toEqual(['claimed'])
  })

  it('looks up which ids were delivered, with their owners: not those claimed or unknown', async () => {
    const { first, second } = await pair()
    await first.claim(['a', 'b', 'd'], 'token-1', 15000)
    await first.delivered(['a', 'd'], 'token-1', ['owner-a'])
    expect(await second.lookup(['a', 'b', 'c', 'a', 'd'])).toEqual(['owner-a', null, null, 'owner-a', ''])
    expect(await second.lookup([])).toEqual([])
  })

  it('takes tokens from one bucket per client for every instance: a burst, then a refill per second, and the wait when empty', async () => {
    const { first, second } = await pair()
    const limit = { burst: 10, perSecond: 5 }
    expect(await first.take!('198.51.100.7', 6, limit)).toBe(0)
    expect(await second.take!('198.51.100.7', 4, limit)).toBe(0)
    // Empty: one more token comes in 200 ms, three in 600 ms.
    const wait = await first.take!('198.51.100.7', 3, limit)
    expect(wait).toBeGreaterThan(400)
    expect(wait).toBeLessThanOrEqual(600)
    // Another client's bucket is full.
    expect(await second.take!('203.0.113.9', 10, limit)).toBe(0)
    // A take larger than the bucket waits for a full one, then takes that.
    expect(await second.take!('192.0.2.1', 50, limit)).toBe(0)
  })

  it('gives each id to exactly one of many concurrent claims from two clients', async () => {
    const { first, second } = await pair()
    const ids = Array.from({ length: 500 }, (_, index) => 'id-' + index)
    // 40 requests, 20 through each client, each claiming every id in its own order.
    const shuffled = () => [...ids].sort(() => Math.random() - 0.5)
    const requests = Array.from({ length: 40 }, (_, index) => {
      const order = shuffled()
      return (index % 2 ? first : second).claim(order, 'token-' + index, 15000).then((states) => ({ order, states }))
    })
    const winners = new Map<string, number>()
    for (const { order, states } of await Promise.all(requests)) {
      expect(states.filter((state) => state != 'new' && state != 'claimed')).toEqual([])
      order.forEach((id, index) => {
        if (states[index] == 'new') winners.set(id, (winners.get(id) || 0) + 1)
      })
    }
    expect(winners.size).toBe(500)
    expect([...winners.values()].every((count) => count == 1)).toBe(true)
  })
})

describe.each(Object.keys(CLIENTS))('redisStore over %s, in Redis', (name) => {
  const KIND = 'redisStore over ' + name

  it("keeps one key per id under its prefix: the token while claimed, 'd' for keepDays once delivered", async () => {
    const { first, raw, prefix } = await KINDS[KIND]({ keepDays: 1.1 })
    await first.claim(['a', 'b'], 'token-1', 15000)
    expect((await raw!('KEYS', prefix + '*')) as string[]).toHaveLength(2)
    expect(await raw!('GET', prefix + '{df}:a')).toBe('token-1')
    const claimTtl = Number(await raw!('PTTL', prefix + '{df}:a'))
    expect(claimTtl).toBeGreaterThan(14000)
    expect(claimTtl).toBeLessThanOrEqual(15000)
    // 1.1 days is no whole number of milliseconds in floating point; Redis takes it rounded.
    await first.delivered(['a'], 'token-1', ['owner'])
    expect(await raw!('GET', prefix + '{df}:a')).toBe('d:owner')
    const keptTtl = Number(await raw!('PTTL', prefix + '{df}:a'))
    expect(keptTtl).toBeGreaterThan(1.1 * 864e5 - 60000)
    expect(keptTtl).toBeLessThanOrEqual(Math.round(1.1 * 864e5))
    // Nothing outside the prefix.
    expect(((await raw!('KEYS', '*')) as string[]).filter((key) => !key.startsWith('t'))).toEqual([])
  })

  it('spreads ids over `shards` slots, a hash tag each, and claims, delivers and looks them up across them', async () => {
    const { first, second, raw, prefix } = await KINDS[KIND]({ shards: 16 })
    const ids = Array.from({ length: 40 }, (_, index) => 'id-' + index)
    expect(await first.claim(ids, 'token-1', 15000)).toEqual(ids.map(() => 'new'))
    const tags = new Set(((await raw!('KEYS', prefix + '*')) as string[]).map((key) => /\{(df\d+)\}/.exec(key)?.[1]))
    expect(tags.size).toBeGreaterThan(8)
    expect([...tags].every((tag) => /^df([0-9]|1[0-5])$/.test(tag!))).toBe(true)
    expect(await second.claim(['id-3', 'id-30', 'new'], 'token-2', 15000)).toEqual(['claimed', 'claimed', 'new'])
    await first.delivered(ids, 'token-1', ids)
    expect(await second.lookup(['id-3', 'id-30', 'new'])).toEqual(['id-3', 'id-30', null])
  })

  it('keeps a client’s bucket in a slot of its own, expiring once it would be full again', async () => {
    const { first, raw, prefix } = await KINDS[KIND]()
    await first.take!('198.51.100.7', 5, { burst: 10, perSecond: 5 })
    expect(await raw!('HGET', prefix + '{rate:198.51.100.7}', 'tokens')).toBe('5')
    const ttl = Number(await raw!('PTTL', prefix + '{rate:198.51.100.7}'))
    expect(ttl).toBeGreaterThan(2000)
    expect(ttl).toBeLessThanOrEqual(3000)
  })

  it('forgets a delivered id after keepDays: a resend after that reaches the sink again', async () => {
    const { first, second } = await KINDS[KIND]({ keepDays: 1000 / 864e5 })
    await first.claim(['a'], 'token-1', 15000)
    await first.delivered(['a'], 'token-1')
    expect(await second.lookup(['a'])).toEqual([''])
    await sleep(1500)
    expect(await second.lookup(['a'])).toEqual([null])
    expect(await second.claim(['a'], 'token-2', 15000)).toEqual(['new'])
  })
})

describe('redisStore while Redis is down', () => {
  it('fails a command within timeoutMs even through a client that queues commands until it reconnects, and works again once Redis is back', async () => {
    const client = createClient({ url: redis.url })
    client.on('error', () => {})
    await client.connect()
    opened.push({ close: async () => client.destroy() })
    const store = redisStore(client, { prefix: 'down:', timeoutMs: 300 })
    expect(await store.claim(['a'], 'token-1', 15000)).toEqual(['new'])
    await redis.stop()
    try {
      // Once the client knows, it queues what it is given (its offline queue, on by default).
      await waitFor(() => !client.isReady, 'the client to notice')
      // Each fails by the store's own timer (its message), not by the client's, which would wait for Redis.
      await expect(store.claim(['b'], 'token-2', 15000)).rejects.toThrow(/did not answer (EVALSHA|SCRIPT) within 300 ms/)
      await expect(store.lookup(['a'])).rejects.toThrow(/did not answer GET within 300 ms/)
    } finally {
      await redis.start()
    }
    // No persistence: the restarted Redis knows nothing of 'a'. One claim once the client is back:
    // a claim that timed out while it reconnected would still run from its offline queue and
    // hold 'a' (README: turn the offline queue off).
    await waitFor(() => client.isReady, 'the client to reconnect', 10000)
    expect(await store.claim(['a'], 'token-3', 15000)).toEqual(['new'])
  })
})

describe("the package's own code", () => {
  it('imports no Redis driver: the shop hands its own client to redisStore', () => {
    for (const file of ['dist/relay.mjs', 'dist/relay.cjs']) {
      const code = readFileSync(file, 'utf8')
      expect(code).toContain('function redisStore(')
      expect(code).not.toMatch(/(from|import|require)\s*\(?\s*['"](redis|ioredis|@redis\/[\w-]+|redis-v4)['"]/)
    }
    const { dependencies = {}, peerDependencies = {} } = JSON.parse(readFileSync('package.json', 'utf8'))
    expect(Object.keys({ ...dependencies, ...peerDependencies }).filter((name) => /redis/.test(name))).toEqual([])
  })
})
