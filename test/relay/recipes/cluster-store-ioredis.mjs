// The relay's store on Redis Cluster, through ioredis's Cluster.
import { redisStore } from 'discovery-feedback/relay'
import { Cluster } from 'ioredis'

const nodes = process.env.REDIS_CLUSTER_NODES.split(',').map((url) => ({ host: new URL(url).hostname, port: Number(new URL(url).port) }))
const cluster = new Cluster(nodes)
cluster.on('error', (error) => console.warn('Redis Cluster:', error.message))

export const store = redisStore(cluster, { shards: 16 })
