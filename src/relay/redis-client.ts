/*
 * What redisStore needs of the shop's own Redis client, and how it sends a raw command through
 * each kind. The package depends on no Redis driver; it takes the client the shop made:
 *
 * - node-redis 4 or 5's `createClient`: `sendCommand(args)`, the command as one array.
 * - node-redis 5's `createCluster`: `sendCommand(firstKey, isReadonly, args)`, routed by the slot
 *   of `firstKey`. It refreshes its map of which master serves which slot only when a node
 *   answers MOVED or ASK (node-redis issue 2806): after a master crashed it keeps sending that
 *   master's slots to the dead node, "The client is offline", until the node comes back. So
 *   the store asks it to refresh (`_slots.rediscover`) whenever a command fails. node-redis 4's
 *   cluster client keeps that map private, so it could never follow a failover: it is refused.
 * - ioredis's `Redis`, or its `Cluster`: `call(command, ...args)`, routed by the command's keys;
 *   a Cluster refreshes its map on a closed connection after `retryDelayOnFailover`, and the
 *   store asks it again (`refreshSlotsCache`) whenever a command fails.
 */

/** node-redis 4 or 5's client of one server (`createClient`). */
export interface NodeRedisClient {
  /**
   * Sends one raw command.
   * @param args - The command's name and its arguments, as one array.
   */
  sendCommand(args: string[]): Promise<unknown>
}

/** A node's client inside node-redis's cluster client. */
export interface NodeRedisNodeClient {
  /** Whether its connection is up: the store refreshes the map of slots from a node that answers. */
  readonly isReady: boolean
}

/**
 * node-redis 5's cluster client (`createCluster`): what the store uses of it is its raw command
 * routed by a key, and its map of slots, refreshed from a master that still answers.
 */
export interface NodeRedisClusterClient {
  /**
   * Sends one raw command to the node of `firstKey`'s slot.
   * @param firstKey - A key the command touches: it names the slot, and so the master.
   * @param isReadonly - Whether a replica may answer: the store always gives false.
   * @param args - The command's name and its arguments, as one array.
   */
  sendCommand(firstKey: string | undefined, isReadonly: boolean | undefined, args: string[]): Promise<unknown>
  /** The masters it knows, each with its client once connected. */
  readonly masters: readonly { client?: NodeRedisNodeClient }[]
  /** Its map of slots, refreshed by asking `startWith` (then its root nodes) which master serves which slot. */
  readonly _slots: { rediscover(startWith: NodeRedisNodeClient): Promise<void> }
}

/** ioredis's `Redis`, or its `Cluster`, which has `refreshSlotsCache`. */
export interface IoRedisClient {
  /**
   * Sends one raw command; a Cluster routes it by the keys the command names.
   * @param command - The command's name.
   * @param args - Its arguments.
   */
  call(command: string, ...args: string[]): Promise<unknown>
  /** A Cluster's: asks the nodes again which master serves which slot. */
  refreshSlotsCache?(): void
}

/**
 * A client of the shop's own: node-redis 4 or 5 (`createClient`), node-redis 5's cluster client
 * (`createCluster`), or ioredis's `Redis` or `Cluster`. The relay depends on none of them.
 */
export type RedisClient = NodeRedisClient | NodeRedisClusterClient | IoRedisClient

/** How the store reaches Redis through a client: a command routed by the key it touches, and a refresh of the client's map of slots. */
export interface RedisRoute {
  send(key: string, args: string[]): Promise<unknown>
  refresh(): Promise<void>
}

const refused = (why: string) => new TypeError('discovery-feedback: relay: redisStore(client): ' + why)

/**
 * How to send through `client`, told by what it has; a client the store cannot use is refused
 * here, when the relay is made, and never at its first request.
 */
export function routeOf(client: RedisClient): RedisRoute {
  if (!client || typeof client != 'object') throw refused('client is ' + client + ': give a node-redis or ioredis client')
  // ioredis has call(); its own sendCommand takes a Command object, so call() is looked for first.
  if ('call' in client && typeof client.call == 'function') {
    const ioredis = client as IoRedisClient
    return {
      send: (_key, args) => ioredis.call(args[0], ...args.slice(1)),
      refresh: async () => ioredis.refreshSlotsCache?.()
    }
  }
  if (!('sendCommand' in client) || typeof client.sendCommand != 'function') {
    throw refused('the client has neither sendCommand() (node-redis) nor call() (ioredis): give a node-redis or ioredis client')
  }
  // Both node-redis cluster clients list their masters; one client of a server does not.
  if (!('masters' in client)) {
    const single = client as NodeRedisClient
    return { send: (_key, args) => single.sendCommand(args), refresh: async () => {} }
  }
  const cluster = client as NodeRedisClusterClient
  if (typeof cluster._slots?.rediscover != 'function') {
    throw refused(
      "this node-redis cluster client cannot refresh its map of slots after a failover (node-redis 4's keeps it private, and it refreshes only on MOVED): " +
        "use node-redis 5's createCluster or ioredis's Cluster"
    )
  }
  return {
    // Never read from a replica: what the store reads decides whether an event is stored twice.
    send: (key, args) => cluster.sendCommand(key, false, args),
    refresh: async () => {
      // From a master that still answers: the one that failed has no news of its own replacement.
      const ready = cluster.masters.filter((master) => master.client?.isReady).map((master) => master.client!)
      const startWith = ready[Math.floor(Math.random() * ready.length)] || cluster.masters.find((master) => master.client)?.client
      if (startWith) await cluster._slots.rediscover(startWith)
    }
  }
}

/**
 * Sends commands through `route`, each given up after `timeoutMs`; any failure but a missing
 * script has the client's map of slots refreshed, one refresh at a time and at most one each
 * `refreshMs`, so that the next command goes to the master that took over.
 */
export function commandSender(route: RedisRoute, timeoutMs: number, refreshMs = 500) {
  let refreshing = false
  let refreshedAt = 0
  const refresh = () => {
    if (refreshing || Date.now() - refreshedAt < refreshMs) return
    refreshing = true
    refreshedAt = Date.now()
    // A refresh that hangs (a node that never answers) must not stop the next one.
    const timer = setTimeout(() => (refreshing = false), Math.max(timeoutMs, refreshMs))
    route
      .refresh()
      .catch(() => {})
      .finally(() => {
        clearTimeout(timer)
        refreshing = false
      })
  }
  /** Sends `args`, which touch `key` (and only keys of its slot). */
  return (key: string, args: string[]) =>
    new Promise<unknown>((resolve, reject) => {
      const fail = (error: unknown) => {
        clearTimeout(timer)
        if (!/NOSCRIPT/.test(String(error))) refresh()
        reject(error)
      }
      // Clients queue commands while they are disconnected (node-redis's offline queue, ioredis's
      // retries): without this a Redis that is down would hold every request open until it is back.
      const timer = setTimeout(() => fail(new Error('discovery-feedback: relay: Redis did not answer ' + args[0] + ' within ' + timeoutMs + ' ms')), timeoutMs)
      route.send(key, args).then((value) => {
        clearTimeout(timer)
        resolve(value)
      }, fail)
    })
}
