// This is the reference collector: the first-party relay (docs/guide/relay.md) with a
// file sink and a memory store, so that the collector the demo and `npx discovery-feedback
// inspect` run and the relay a shop deploys are one code path. The relay speaks the collector
// protocol (docs/reference/collector-protocol.md); what this file adds is the collector's own:
// the NDJSON file, the event ids read back from it at start, and the messages the inspector shows.
import { closeSync, existsSync, mkdirSync, openSync, writeSync } from 'node:fs'
import { dirname } from 'node:path'
import { nanoid } from 'nanoid'
import { createRelay, memoryStore, toNodeHandler, type Relay } from '../relay'
import { isServerAgent } from '../shared/server-agent'
import { DEMO_KEY } from './access'
import { messagesOf } from './messages'
import { readStored } from './stored-events'
import type { Collector, CollectorMessage, CollectorOptions } from './types'

const RECENT = 100

/** Keeps the last messages and the counts, and passes each message on to the listeners. */
function messageLog() {
  const listeners = new Set<(message: CollectorMessage) => void>()
  const recent: CollectorMessage[] = []
  const counts = { accepted: 0, duplicate: 0, rejected: 0 }
  const publish = (message: CollectorMessage) => {
    counts[message.type]++
    recent.push(message)
    if (recent.length > RECENT) recent.shift()
    for (const listener of listeners) listener(message)
  }
  const subscribe = (listener: (message: CollectorMessage) => void) => {
    listeners.add(listener)
    return () => void listeners.delete(listener)
  }
  return { publish, subscribe, recent: () => recent.slice(), counts }
}

/**
 * Creates a collector that appends each accepted event as one line of an NDJSON file.
 *
 * Each batch is written with one synchronous write before the relay answers, so an event that
 * was answered 2xx survives the process being killed right after. Event ids already in the
 * file are read at start into the relay's memory store, so a resent event is acknowledged and
 * stored once, across restarts too (the last 200,000 ids, as the store keeps them).
 *
 * It takes every origin (`*`): the inspector stands in front of staging shops on other origins
 * and Shopify pixels, whose sandbox sends `Origin: null`. It trusts no proxy, so `user.ip` is
 * the connection's peer, sets no cookie, since the demo's pages renew the uid themselves, and no
 * rate limit, since a developer's pages and tests all come from one address. It keeps the
 * events of bots and headless browsers, marked, where a shop's relay drops them.
 * @param options - The data file, the keys it takes, and the largest body.
 */
export function createCollector(options: CollectorOptions): Collector {
  const { file, maxBodyBytes, keys = [DEMO_KEY] } = options
  mkdirSync(dirname(file), { recursive: true })
  const store = memoryStore()
  const cutShort = existsSync(file) && readStored(file, store.remember)
  const fd = openSync(file, 'a')
  // The next event starts on a fresh line, so that a cut-short line cannot swallow it.
  if (cutShort) writeSync(fd, '\n')
  const log = messageLog()

  // The service takes a server sender's shopper ip and ua without a secret (SPEC "User object").
  // The collector stands in for it, so it vouches for every server sender with a secret of its own.
  const serverSecret = nanoid(32)
  const relay = createRelay({
    keys: [...keys],
    // One synchronous write to the file opened above rather than the relay's fileSink, which
    // opens its file on the first batch: a data file that cannot be written fails the start,
    // and the fresh line goes before any event.
    sink: async (events) => {
      writeSync(fd, events.map((event) => JSON.stringify(event) + '\n').join(''))
    },
    store,
    origins: '*',
    trustProxy: 0,
    // One developer's pages and tests, all from one address: no rate limit.
    rateLimit: false,
    // Tests drive headless browsers, and a developer wants to see a crawler's events: kept,
    // marked `bot`, and shown marked.
    bots: 'keep',
    cookie: false,
    maxBodyBytes,
    onBatch: (report) => messagesOf(report).forEach(log.publish),
    // A client that went before its body ended (ECONNRESET) is no failure of the collector's;
    // what it refused or kept from bots, the inspector shows.
    onError: (error) => {
      if ((error as Error & { code?: string }).code != 'ECONNRESET' && error.name != 'DropNotice') console.error('discovery-feedback: collector:', error)
    },
    serverSecrets: [serverSecret]
  })
  const vouched: Relay = {
    ...relay,
    fetch(request, info) {
      if (isServerAgent(request.headers.get('user-agent')) && !request.headers.has('authorization'))
        request.headers.set('authorization', 'Bearer ' + serverSecret)
      return relay.fetch(request, info)
    }
  }

  return {
    handle: toNodeHandler(vouched),
    subscribe: log.subscribe,
    recent: log.recent,
    counts: log.counts,
    close: () => closeSync(fd)
  }
}
