// The relay's store on Redis Cluster, through node-redis 5's cluster client: every instance of
// the relay imports it (`createRelay({ ..., store })`) and shares what was delivered.
import { redisStore } from 'discovery-feedback/relay'
import { createCluster } from 'redis'

const cluster = createCluster({
  // Every node's address, or a few: the client learns the rest from them.
  rootNodes: process.env.REDIS_CLUSTER_NODES.split(',').map((url) => ({ url })),
  // A command to a node that is down fails at once, and the relay answers 503, rather than
  // waiting in the client's queue for the node to come back.
  defaults: { disableOfflineQueue: true }
})
// Without a listener, a node's failure would throw at the process.
cluster.on('error', (error) => console.warn('Redis Cluster:', error.message))
await cluster.connect()

// The event ids spread over 16 slots, and so over every master.
export const store = redisStore(cluster, { shards: 16 })
