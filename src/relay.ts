/**
 * The first-party relay, for Node 20 or later: the collector protocol as a handler a shop runs
 * on its own domain, in front of the service, with its sinks (forward to the service, a file)
 * and its delivery stores (memory, Redis).
 *
 * @packageDocumentation
 */
export { createRelay } from './relay/create-relay'
export { memoryStore } from './relay/memory-delivery-store'
export { redisStore } from './relay/redis-store'
export type { RedisStoreOptions } from './relay/redis-store'
export type { IoRedisClient, NodeRedisClient, NodeRedisClusterClient, NodeRedisNodeClient, RedisClient } from './relay/redis-client'
export { fileSink } from './relay/file-sink'
export type { FileSinkOptions } from './relay/file-sink'
export { forwardSink } from './relay/forward-sink'
export type { ForwardSink, ForwardSinkOptions } from './relay/forward-sink'
export { SinkUnavailable } from './relay/sink-unavailable'
export { SinkRefusal } from './relay/sink-refusal'
export type { RefusedEvent } from './relay/sink-refusal'
export { toNodeHandler } from './relay/node'
export type {
  BatchReport,
  ClaimState,
  DeadLetter,
  DeadLetterSink,
  DeliveryStore,
  OrderReport,
  PurchaseField,
  Relay,
  RelayEvent,
  RelayOptions,
  RequestInfo,
  Sink,
  SinkSource
} from './relay/types'
