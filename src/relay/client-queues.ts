import type { Queued } from '../shared/engine'

/** An entry that knows whose request it came in (SinkSource's `client`; '' for none). */
export type ClientEntry = Queued & { client: string }

/**
 * forwardSink's store for the engine: a queue per client, served in turn, so that one client's
 * backlog holds another's events back by at most one request of each client waiting, never by
 * the whole backlog. `entries` is what the engine reads: at most `view` entries that wait, in
 * the order they are to go; those a request takes leave their queue (`taken`), and stay counted
 * until they are settled (`remove`).
 */
export function clientQueues<E extends ClientEntry>(view: number) {
  // Clients in the order they are served next: the one served longest ago first, since a
  // client served moves to the end (a Map keeps the order of insertion).
  const queues = new Map<string, Set<E>>()
  const sending = new Set<E>()
  let queued = 0

  /** Entries that wait, at most `most`, in turn: each client's oldest, then each one's second, and so on. */
  function next(most: number): E[] {
    const order: E[] = []
    const rest: Iterator<E>[] = []
    for (const queue of queues.values()) {
      if (order.length >= most) return order
      const entries = queue.values()
      order.push(entries.next().value!)
      rest.push(entries)
    }
    while (order.length < most && rest.length) {
      for (let index = 0; index < rest.length && order.length < most;) {
        const entry = rest[index].next()
        if (entry.done) rest.splice(index, 1)
        else {
          order.push(entry.value)
          index++
        }
      }
    }
    return order
  }

  /** Takes `entry` out of its client's queue, if it waits there; its client is forgotten once none waits. */
  function unqueue(entry: E): boolean {
    const queue = queues.get(entry.client)
    if (!queue?.delete(entry)) return false
    queued--
    if (!queue.size) queues.delete(entry.client)
    return true
  }

  return {
    get entries(): E[] {
      return next(view)
    },
    add(entry: E) {
      let queue = queues.get(entry.client)
      if (!queue) queues.set(entry.client, (queue = new Set()))
      queue.add(entry)
      queued++
    },
    /** Entries a request now carries: out of their queues, and their clients served last. */
    taken(entries: E[]) {
      for (const entry of entries) {
        if (!unqueue(entry)) continue
        sending.add(entry)
        const queue = queues.get(entry.client)
        if (queue) {
          queues.delete(entry.client)
          queues.set(entry.client, queue)
        }
      }
    },
    /** Settled or given up, whether waiting or carried. */
    remove(entries: E[]) {
      for (const entry of entries) if (!sending.delete(entry)) unqueue(entry)
    },
    /** Of `entries`, those still waiting, taken out of their queues (a call given up). */
    withdraw(entries: Iterable<E>): E[] {
      const withdrawn: E[] = []
      for (const entry of entries) if (unqueue(entry)) withdrawn.push(entry)
      return withdrawn
    },
    /** Every entry that waits, taken out of its queue. */
    clear(): E[] {
      const all = [...queues.values()].flatMap((queue) => [...queue])
      queues.clear()
      queued = 0
      return all
    },
    /** How many of `client`'s entries wait. */
    waitingOf: (client: string) => queues.get(client)?.size || 0,
    /** Entries held: waiting, or carried by a request in flight. */
    size: () => queued + sending.size
  }
}
