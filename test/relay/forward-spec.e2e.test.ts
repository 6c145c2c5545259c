// @vitest-environment node
// Two relay processes sharing a real redis-server, forwarding in SPEC's format (one envelope a
// request) to the service stand-in, which takes nothing else: 10,000 events, a tenth of the
// batches sent to both instances, and the service down for a while in the middle. The stand-in
// sees no event ids, so each event carries its id as its item_id, and the stand-in's events are
// counted by it.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startServiceStandIn } from '../support/service-stand-in'
import { waitFor } from '../support/wait'
import { batchesOf, createSender, type Envelope, type RelayInstance, startRelay } from './instances-driver'
import { type RedisServer, startRedis } from './redis-server'

let redis: RedisServer
let standIn: Awaited<ReturnType<typeof startServiceStandIn>>
let running: RelayInstance[] = []

beforeAll(async () => {
  redis = await startRedis()
  standIn = await startServiceStandIn({ keys: ['KEY'], accept: 'header' })
})
afterAll(async () => {
  await Promise.all(running.map((relay) => relay.stop('SIGKILL')))
  await standIn?.close()
  await redis?.close()
})

/** The driver's batches, each event marked with its id as its item_id. */
const markedBatches = (prefix: string, count: number): Envelope[][] =>
  batchesOf(prefix, count).map((batch) => batch.map((event) => ({ ...event, properties: { ...event.properties, item_id: event.event_id } })))

it('10,000 events through two relay processes reach the service exactly once each, across resends to the other instance and an outage', async () => {
  const env = { REDIS_URL: redis.url, SINK: 'forward', FORWARD_URL: standIn.url, FORWARD_FORMAT: 'spec' }
  running = await Promise.all([startRelay(env), startRelay(env)])
  const urls = running.map((relay) => relay.url)
  const batches = markedBatches('spec', 200)
  const sender = createSender(urls)
  let answered = 0
  let downAt = 0
  let outage: Promise<void> | undefined
  // Batch i to instance i % 2; every tenth batch once more to the other instance, a few batches
  // after its first send was answered (a resend after a lost answer). After 60 answers the
  // service goes down until the sender has been told 503 ten times.
  const queue: Parameters<typeof sender.run>[0] = batches.map((events, index) => ({
    label: 'batch-' + index,
    events,
    instance: index % 2,
    done: () => {
      if (index % 10 == 5) queue.splice(Math.min(8, queue.length), 0, { label: 'resend-' + index, events, instance: (index + 1) % 2 })
      if (++answered != 60) return
      downAt = Date.now()
      standIn.down(true)
      const refusedSince = () => sender.attempts.filter((attempt) => attempt.status == 503 && attempt.startedAt >= downAt).length
      outage = waitFor(() => refusedSince() >= 10, 'ten requests answered 503', 20000).finally(() => standIn.down(false))
    }
  }))
  await sender.run(queue, 16)
  await outage

  expect(downAt).toBeGreaterThan(0)
  expect(standIn.refused).toEqual([])
  const counts = new Map<string, number>()
  for (const event of standIn.events) counts.set(event.properties.item_id as string, (counts.get(event.properties.item_id as string) || 0) + 1)
  expect(counts.size).toBe(10000)
  expect([...counts].filter(([, count]) => count > 1)).toEqual([])
  expect(new Set(counts.keys())).toEqual(new Set(batches.flat().map((event) => event.event_id)))
  // The relays' final answers count each event once, and each resent one once more: as accepted,
  // or as a duplicate when it reached the service before (a resend, or a batch answered 503
  // after some of its events got through: those were marked delivered).
  const finals = sender.attempts.filter((attempt) => attempt.status == 200)
  expect(finals).toHaveLength(220)
  const accepted = finals.reduce((sum, attempt) => sum + attempt.accepted!, 0)
  const duplicates = finals.reduce((sum, attempt) => sum + attempt.duplicates!, 0)
  expect(accepted + duplicates).toBe(11000)
  expect(duplicates).toBeGreaterThanOrEqual(1000)
  // Both instances forwarded, and the outage was answered 503 with a Retry-After.
  expect(new Set(finals.filter((attempt) => attempt.accepted).map((attempt) => attempt.instance))).toEqual(new Set([0, 1]))
  const refused = sender.attempts.filter((attempt) => attempt.status == 503 && attempt.startedAt >= downAt)
  expect(refused.length).toBeGreaterThanOrEqual(10)
  expect(refused.filter((attempt) => !attempt.retryAfter)).toEqual([])
  console.log(
    `spec format, two instances: ${standIn.requests()} requests to the service for 10,000 events; ${refused.length} requests answered 503 during the outage, ${duplicates - 1000} events of them delivered before the 503`
  )
}, 60000)
