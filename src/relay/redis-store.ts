import { fnv1a32 } from './dedupe'
import { commandSender, routeOf, type RedisClient } from './redis-client'
import { writeWithRetries } from './store-retries'
import type { ClaimState, DeliveryStore } from './types'

/*
 * Which event ids were delivered, in Redis, shared by every instance of the relay: several
 * processes behind a load balancer, or serverless functions. One key per event id:
 * "<prefix>{df}:<id>" holds the claiming request's token while its sink runs (expiring after
 * the claim's time), then "d:<owner>" once delivered (expiring after `keepDays`). The braces make
 * keys hash to one slot, so that each script below may touch all of a batch's keys on a cluster;
 * with `shards`, ids spread over that many slots ("{df3}"), a script per slot. Each step is one
 * Lua script, which Redis runs atomically: two instances claiming one id at once never both get it.
 * The rate limit's buckets are one key per client, "<prefix>{rate:<client>}", each in a slot of its own.
 */

const CLAIM = `
local states = {}
for index, key in ipairs(KEYS) do
  local held = redis.call('GET', key)
  if held == 'd' or string.sub(held or '', 1, 2) == 'd:' then states[index] = 'delivered'
  elseif held then states[index] = 'claimed'
  else
    redis.call('SET', key, ARGV[1], 'PX', ARGV[2])
    states[index] = 'new'
  end
end
return states`

// ARGV: the time to keep them, then each key's owner.
const DELIVERED = `
for index, key in ipairs(KEYS) do redis.call('SET', key, 'd:' .. ARGV[index + 1], 'PX', ARGV[1]) end
return 1`

const RELEASE = `
for _, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[1] then redis.call('DEL', key) end
end
return 1`

// The token bucket of token-bucket.ts on Redis's clock, shared by every instance. ARGV: burst,
// tokens per second, cost. Returns the milliseconds to wait, 0 when taken.
const TAKE = `
local burst = tonumber(ARGV[1])
local per_ms = tonumber(ARGV[2]) / 1000
local cost = math.min(tonumber(ARGV[3]), burst)
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = burst
if state[1] then tokens = math.min(burst, tonumber(state[1]) + (now - tonumber(state[2])) * per_ms) end
local wait = 0
if tokens >= cost then tokens = tokens - cost else wait = math.ceil((cost - tokens) / per_ms) end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / per_ms) + 1000)
return wait`

/** The options of `redisStore()`. */
export interface RedisStoreOptions {
  /** Prefix of every key. Default 'df:'. */
  prefix?: string
  /** Days a delivered id is remembered. Default 7, the tracker's own bound on a kept event. */
  keepDays?: number
  /**
   * Milliseconds a command may take before the store gives up on it, so that the relay answers
   * 503 and the browser keeps the events. Default 2,000. Clients queue commands while they are
   * disconnected (node-redis's offline queue, ioredis's retries), so without this a Redis that
   * is down would hold every request open until it is back.
   */
  timeoutMs?: number
  /**
   * Slots the ids spread over: 1 (default) keeps every id in one slot, one script per batch; on
   * Redis Cluster, 16 or more spread the ids over as many slots (and so masters), a script per
   * slot a batch touches. 16 fall on each of three masters as `redis-cli --cluster create` splits
   * the slots (7, 4 and 5 of them); more masters want more: four times their number or so.
   */
  shards?: number
}

/** A script's SHA1 in hex, as EVALSHA names it. */
async function sha1Of(source: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-1', new TextEncoder().encode(source)))
  return [...digest].map((byte) => byte.toString(16).padStart(2, '0')).join('')
}

/**
 * The store's scripts run on the keys of a batch's ids, a call per slot they fall in: `shardOf`
 * tells an id's slot apart, `keyOf` its key.
 */
function slotScripts(command: ReturnType<typeof commandSender>, shardOf: (id: string) => string, keyOf: (id: string) => string) {
  // EVALSHA sends 40 characters where EVAL sends the whole script, on every request. The SHA1 is
  // the store's own, not SCRIPT LOAD's answer: on a cluster each master has a script cache of its
  // own, and a replica that took over may have none.
  const hashes = new Map<string, Promise<string>>()
  /** Runs a script on `keys`, all of one slot, by its SHA1; a node that lacks it (NOSCRIPT) gets it whole, and keeps it from then on. */
  async function evaluate(source: string, keys: string[], args: string[]): Promise<unknown> {
    if (!hashes.has(source)) hashes.set(source, sha1Of(source))
    try {
      return await command(keys[0], ['EVALSHA', await hashes.get(source)!, String(keys.length), ...keys, ...args])
    } catch (error) {
      if (!/NOSCRIPT/.test(String(error))) throw error
      return command(keys[0], ['EVAL', source, String(keys.length), ...keys, ...args])
    }
  }
  /**
   * Runs `source` on the keys of `ids` with `args` and, per key, its entry of `perKey`. Resolves
   * each id's result in the order of `ids` (undefined where its slot's call failed) and the first
   * failure, once every call has settled.
   */
  async function settled(source: string, ids: string[], args: string[], perKey: string[] = []) {
    const groups = new Map<string, number[]>()
    ids.forEach((id, index) => {
      const shard = shardOf(id)
      const group = groups.get(shard)
      if (group) group.push(index)
      else groups.set(shard, [index])
    })
    const results: unknown[] = []
    let failure: { error: unknown } | undefined
    await Promise.all(
      [...groups.values()].map(async (indexes) => {
        const keys = indexes.map((index) => keyOf(ids[index]))
        try {
          const answer = await evaluate(source, keys, [...args, ...(perKey.length ? indexes.map((index) => perKey[index]) : [])])
          indexes.forEach((index, position) => (results[index] = Array.isArray(answer) ? answer[position] : answer))
        } catch (error) {
          failure ||= { error }
        }
      })
    )
    return { results, failure }
  }
  /** Runs `source` as settled() does, and rejects with the first failure. */
  async function everywhere(source: string, ids: string[], args: string[], perKey: string[] = []): Promise<unknown[]> {
    const { results, failure } = await settled(source, ids, args, perKey)
    if (failure) throw failure.error
    return results
  }
  return { evaluate, settled, everywhere }
}

/**
 * The relay's delivery store in Redis or Redis Cluster, shared by every instance of a relay that
 * runs in several processes: which event ids reached the sink, and the rate limit's buckets. A
 * client it cannot use is refused here, with a TypeError that says why. docs/guide/relay.md,
 * "Sinks and stores" and "Scaling out", says what it keeps and what a failover costs.
 * @param client - A connected client of the shop's own: node-redis 4 or 5's createClient, node-redis 5's createCluster, ioredis's Redis or Cluster.
 * @param options - The keys' prefix, how long ids are remembered, the command timeout, and the shards.
 */
export function redisStore(client: RedisClient, options: RedisStoreOptions = {}): DeliveryStore {
  const { prefix = 'df:', keepDays = 7, timeoutMs = 2000, shards = 1 } = options
  const command = commandSender(routeOf(client), timeoutMs)
  const shardOf = (id: string) => (shards > 1 ? String(fnv1a32(id) % shards) : '')
  const keyOf = (id: string) => prefix + '{df' + shardOf(id) + '}:' + id
  const { evaluate, settled, everywhere } = slotScripts(command, shardOf, keyOf)
  // PX takes whole milliseconds: 1.1 days is 95040000.00000001 ms in floating point, which Redis
  // refuses ("value is not an integer"), and every batch would fail.
  const milliseconds = (value: number) => String(Math.max(1, Math.round(value)))
  const keepMs = milliseconds(keepDays * 864e5)

  return {
    async claim(ids, token, ttlMs) {
      if (!ids.length) return []
      const { results, failure } = await settled(CLAIM, ids, [token, milliseconds(ttlMs)])
      if (failure) {
        // A slot without a master (a crash, before its replica takes over): the request is
        // answered 503 and comes again, so what it claimed is let go now, rather than holding
        // those events from every resend for the claim's whole time. In every slot: a claim cut
        // off by the crash may have run, and reached the replica (store-retries.ts).
        await writeWithRetries(
          () => everywhere(RELEASE, ids, [token]),
          ttlMs,
          () => {}
        )
        throw failure.error
      }
      // An id held by this very request: a client that sends a command again after its
      // connection closed (ioredis does, after retryDelayOnFailover) reran a claim that had run
      // on a master before it crashed, and reached its replica. The request is answered 503 for
      // its held ids; freed, they are the resend's, not the claim's for 30 s. Another request's
      // claims are not this token's, and stay.
      const held = ids.filter((_, index) => results[index] == 'claimed')
      if (held.length) await everywhere(RELEASE, held, [token]).catch(() => {})
      return results as ClaimState[]
    },
    async delivered(ids, _token, owners = []) {
      if (ids.length)
        await everywhere(
          DELIVERED,
          ids,
          [keepMs],
          ids.map((_, index) => owners[index] || '')
        )
    },
    async release(ids, token) {
      if (ids.length) await everywhere(RELEASE, ids, [token])
    },
    async lookup(ids) {
      if (!ids.length) return []
      // One GET each, not one MGET: on a cluster the ids may lie in several slots.
      const values = (await Promise.all(ids.map((id) => command(keyOf(id), ['GET', keyOf(id)])))) as (string | null)[]
      // "d" alone: delivered before owners were kept.
      return values.map((value) => (value == 'd' ? '' : value?.startsWith('d:') ? value.slice(2) : null))
    },
    async take(name, cost, { burst, perSecond }) {
      return Number(await evaluate(TAKE, [prefix + '{rate:' + name + '}'], [String(burst), String(perSecond), String(cost)]))
    }
  }
}
