import type { ClaimState, DeliveryStore } from './types'

/*
 * Which event ids were delivered, in Redis, shared by every instance of the relay: several
 * processes behind a load balancer, or serverless functions. One key per event id:
 * "<prefix>{df}:<id>" holds the claiming request's token while its sink runs (expiring after
 * the claim's time), then "d" once delivered (expiring after `keepDays`). The braces make every
 * key hash to one slot, so that each script below may touch all of a batch's keys on a cluster.
 * Each step is one Lua script, which Redis runs atomically: two instances claiming one id at
 * once never both get it.
 */

const CLAIM = `
local states = {}
for index, key in ipairs(KEYS) do
  local held = redis.call('GET', key)
  if held == 'd' then states[index] = 'delivered'
  elseif held then states[index] = 'claimed'
  else
    redis.call('SET', key, ARGV[1], 'PX', ARGV[2])
    states[index] = 'new'
  end
end
return states`

const DELIVERED = `
for _, key in ipairs(KEYS) do redis.call('SET', key, 'd', 'PX', ARGV[1]) end
return 1`

const RELEASE = `
for _, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[1] then redis.call('DEL', key) end
end
return 1`

/**
 * A client of the shop's own: node-redis v4 or v5 (`sendCommand`) or ioredis (`call`). The relay
 * depends on neither; it sends raw commands through whichever the client has.
 */
export type RedisClient = { sendCommand(args: string[]): Promise<unknown> } | { call(command: string, ...args: string[]): Promise<unknown> }

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
}

export function redisStore(client: RedisClient, { prefix = 'df:', keepDays = 7, timeoutMs = 2000 }: RedisStoreOptions = {}): DeliveryStore {
  // ioredis has call(); node-redis has no call() but sendCommand(array). ioredis's own
  // sendCommand takes a Command object, so call() is looked for first.
  const send = (args: string[]): Promise<unknown> =>
    'call' in client && typeof client.call == 'function'
      ? client.call(args[0], ...args.slice(1))
      : (client as { sendCommand(args: string[]): Promise<unknown> }).sendCommand(args)
  const command = (args: string[]) =>
    new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error('discovery-feedback: relay: Redis did not answer ' + args[0] + ' within ' + timeoutMs + ' ms')),
        timeoutMs
      )
      send(args).then(
        (value) => {
          clearTimeout(timer)
          resolve(value)
        },
        (error) => {
          clearTimeout(timer)
          reject(error)
        }
      )
    })
  const keyOf = (id: string) => prefix + '{df}:' + id
  const script = (source: string, ids: string[], ...args: string[]) => command(['EVAL', source, String(ids.length), ...ids.map(keyOf), ...args])
  // PX takes whole milliseconds: 1.1 days is 95040000.00000001 ms in floating point, which Redis
  // refuses ("value is not an integer"), and every batch would fail.
  const milliseconds = (value: number) => String(Math.max(1, Math.round(value)))
  const keepMs = milliseconds(keepDays * 864e5)

  return {
    async claim(ids, token, ttlMs) {
      if (!ids.length) return []
      return (await script(CLAIM, ids, token, milliseconds(ttlMs))) as ClaimState[]
    },
    async delivered(ids) {
      if (ids.length) await script(DELIVERED, ids, keepMs)
    },
    async release(ids, token) {
      if (ids.length) await script(RELEASE, ids, token)
    },
    async lookup(ids) {
      if (!ids.length) return []
      const values = (await command(['MGET', ...ids.map(keyOf)])) as (string | null)[]
      return values.map((value) => value == 'd')
    }
  }
}
