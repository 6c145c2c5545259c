// What the multi-instance tests drive: relay processes (relay-process.mjs) started and killed,
// envelopes, the NDJSON sink read back, and a sender that speaks the tracker's side of README
// "Collector protocol": a batch is done on 2xx; a 5xx, a 429 or no answer is tried again with
// backoff (Retry-After when given), on the other instance after no answer; a batch whose request
// got no answer is asked about first with `?unconfirmed=` and only what is `missing` goes again.
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const PROCESS = fileURLToPath(new URL('relay-process.mjs', import.meta.url))

export type Envelope = { event: string; properties: object; key: string; t_client: number; user: object; event_id: string }

/** A valid click-item envelope with the event id `id`. */
export const envelope = (id: string): Envelope => ({
  event: 'click-item',
  properties: { rid: 's-1', item_id: '42', variant_item_id: '421' },
  key: 'KEY',
  t_client: 1767261600000,
  user: { uid: 'uid-1', sid: 'sid-1', lang: ['en'] },
  event_id: id
})

/** `count` batches of `size` envelopes, ids `<prefix>-<batch>-<index>`. */
export const batchesOf = (prefix: string, count: number, size = 50): Envelope[][] =>
  Array.from({ length: count }, (_, batch) => Array.from({ length: size }, (_, index) => envelope(`${prefix}-${batch}-${index}`)))

export interface RelayInstance {
  url: string
  pid: number
  child: ChildProcess
  /** Resolves with the exit code (null when a signal ended it). */
  exited: Promise<number | null>
  /** The process's resident set in bytes (VmRSS of /proc/<pid>/status). */
  rss(): number
  /** Its memory and counts; with `gc`, after a full garbage collection. */
  stats(gc?: boolean): Promise<{ rss: number; heapUsed: number; errors: number; sinkCalls: number }>
  stop(signal?: NodeJS.Signals): Promise<void>
  output(): string
}

/** Starts relay-process.mjs with `env` (see its header) and resolves once it listens. */
export async function startRelay(env: Record<string, string>): Promise<RelayInstance> {
  if (!existsSync(new URL('../../dist/relay.mjs', import.meta.url))) throw new Error('dist/relay.mjs is missing: run `npx rollup -c` first')
  const child = spawn(process.execPath, ['--expose-gc', PROCESS], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stderr!.on('data', (chunk) => (output += chunk))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const port = await new Promise<number>((resolve, reject) => {
    let line = ''
    const timer = setTimeout(() => reject(new Error('the relay process did not start within 10 s: ' + output)), 10000)
    child.stdout!.on('data', (chunk) => {
      line += chunk
      const match = /\{"port":(\d+)\}/.exec(line)
      if (match) {
        clearTimeout(timer)
        resolve(Number(match[1]))
      }
    })
    exited.then((code) => {
      clearTimeout(timer)
      reject(new Error('the relay process exited with ' + code + ': ' + output))
    })
  })
  const url = `http://127.0.0.1:${port}`
  return {
    url,
    pid: child.pid!,
    child,
    exited,
    rss() {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8')
      return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024
    },
    stats: async (gc) => (await fetch(url + '/__stats' + (gc ? '?gc' : ''))).json(),
    async stop(signal = 'SIGTERM') {
      if (child.exitCode != null || child.signalCode != null) return
      child.kill(signal)
      await exited
    },
    output: () => output
  }
}

/** How many times each event id is in the NDJSON file. */
export function sinkCounts(file: string): Map<string, number> {
  const counts = new Map<string, number>()
  if (!existsSync(file)) return counts
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line) continue
    // A line cut short would throw here: a sink write that died half-way is a failure too.
    const id = JSON.parse(line).event_id as string
    counts.set(id, (counts.get(id) || 0) + 1)
  }
  return counts
}

/** The ids counted more than once. */
export const twice = (counts: Map<string, number>) => [...counts].filter(([, count]) => count > 1).map(([id]) => id)

export type Answer = { status: number; retryAfter: string | null; body: any; error?: string }

/** One POST as the tracker makes it (text/plain, `?t_sent=`); status 0 when no answer came. */
export async function post(url: string, body: unknown[], unconfirmed?: string[]): Promise<Answer> {
  const query = '?t_sent=' + Date.now() + (unconfirmed ? '&unconfirmed=' + unconfirmed.join(',') : '')
  try {
    const response = await fetch(url + '/collect' + query, {
      method: 'POST',
      headers: { 'content-type': 'text/plain;charset=UTF-8' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(20000)
    })
    const text = await response.text()
    let parsed: any = text
    try {
      parsed = JSON.parse(text)
    } catch {
      // Not JSON: kept as text for the failure message.
    }
    return { status: response.status, retryAfter: response.headers.get('retry-after'), body: parsed }
  } catch (error) {
    return { status: 0, retryAfter: null, body: undefined, error: String((error as Error).cause || error) }
  }
}

/** One request of a batch, as the sender made it. */
export interface Attempt {
  /** The batch's label. */
  label: string
  instance: number
  /** The ids it carried, or asked about when `asked`. */
  ids: string[]
  asked: boolean
  startedAt: number
  endedAt: number
  status: number
  retryAfter: string | null
  accepted?: number
  duplicates?: number
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * The tracker's side of the protocol, over several relay instances (`urls`, as a load balancer
 * would spread them). `deliver` resolves once the relay answered 2xx for every event of the
 * batch; every request is recorded in `attempts`.
 */
export function createSender(urls: string[], { askAfterNoAnswer = true, maxWaitMs = 3000 } = {}) {
  const attempts: Attempt[] = []
  /** Requests without an answer yet, by instance. */
  const inFlight = urls.map(() => 0)

  async function deliver(label: string, events: Envelope[], first: number): Promise<Attempt> {
    let instance = first % urls.length
    let pending = events
    let asking = false
    let failures = 0
    for (;;) {
      const ids = pending.map((event) => event.event_id)
      const startedAt = Date.now()
      inFlight[instance]++
      const answer = await post(urls[instance], asking ? [] : pending, asking ? ids : undefined).finally(() => inFlight[instance]--)
      const attempt: Attempt = { label, instance, ids, asked: asking, startedAt, endedAt: Date.now(), status: answer.status, retryAfter: answer.retryAfter }
      if (typeof answer.body == 'object' && answer.body) Object.assign(attempt, { accepted: answer.body.accepted, duplicates: answer.body.duplicates })
      attempts.push(attempt)
      if (answer.status >= 200 && answer.status < 300) {
        if (!asking) return attempt
        // README "Collector protocol": only the events the relay lacks go again.
        const missing = new Set(answer.body.missing as string[])
        pending = pending.filter((event) => missing.has(event.event_id))
        asking = false
        if (!pending.length) return attempt
        continue
      }
      if (answer.status == 0) {
        // No answer: the events may or may not have been stored; ask, and try elsewhere.
        asking = askAfterNoAnswer
        instance = (instance + 1) % urls.length
        await sleep(Math.min(50 * 2 ** failures++, 1000))
        continue
      }
      if (answer.status >= 500 || answer.status == 429 || answer.status == 408) {
        const asked = Number(answer.retryAfter) * 1000
        await sleep(Math.min(asked >= 0 ? asked : 100 * 2 ** failures, maxWaitMs))
        failures++
        continue
      }
      throw new Error(`batch ${label}: the relay refused it with ${answer.status}: ${JSON.stringify(answer.body)}`)
    }
  }

  /** Delivers labelled batches with `workers` requests in flight at most, taking them from `queue` in order (the queue may grow meanwhile). */
  async function run(queue: { label: string; events: Envelope[]; instance: number; done?: (attempt: Attempt) => void }[], workers: number) {
    await Promise.all(
      Array.from({ length: workers }, async () => {
        for (let next = queue.shift(); next; next = queue.shift()) {
          // Not `next.done?.(await deliver(…))`: without `done` that would skip the delivery too.
          const attempt = await deliver(next.label, next.events, next.instance)
          next.done?.(attempt)
        }
      })
    )
  }

  return { attempts, inFlight, deliver, run }
}
