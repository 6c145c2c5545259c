/**
 * The reference collector and the live inspector, in Node: what `npx discovery-feedback
 * inspect` and `npm run demo` start, to see a shop's events arrive, checked and linted.
 *
 * @packageDocumentation
 */
// The reference collector and the live inspector, in Node: what `npx discovery-feedback inspect`
// starts, and the custom pixel's code `npx discovery-feedback shopify-pixel` prints. Node's own
// types come with it: its server is Node's, and nothing else of the package needs them.
/// <reference types="node" />
export { startInspect } from './collector/server'
export type { Inspect, InspectOptions, MoreRoutes } from './collector/server'
export { createCollector } from './collector/collector'
export { messagesOf } from './collector/messages'
export { createActivity } from './collector/activity'
export type { ActivityOptions } from './collector/activity'
export { DEMO_KEY, KEY_INVALID, KEY_MISSING, keysFromEnv } from './collector/access'
export type { KeysEnv } from './collector/access'
export { customPixelCode } from './collector/custom-pixel'
export type { CustomPixelOptions } from './collector/custom-pixel'
export type {
  Activity,
  ActivityStats,
  Collector,
  CollectorMessage,
  CollectorOptions,
  FunnelRow,
  Lint,
  LintedMessage,
  RejectedSummary,
  StoredEvent
} from './collector/types'
