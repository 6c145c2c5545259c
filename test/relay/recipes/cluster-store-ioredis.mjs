// The relay's store on Redis Cluster, through ioredis's Cluster.
import { redisStore } from 'discovery-feedback/relay'
import { Cluster } from 'ioredis'

const nodes = process.env.REDIS_CLUSTER_NODES.split(',').map((url) => ({ host: new URL(url).hostname, port: Number(new URL(url).port) }))
// Commands fail at once while the cluster is unreachable, rather than waiting in a queue.
const cluster = new Cluster(nodes, { enableOfflineQueue: false })
cluster.on('error', (error) => console.warn('Redis Cluster:', error.message))
await new Promise((resolve) => cluster.once('ready', resolve))

export const store = redisStore(cluster, { shards: 16 })
