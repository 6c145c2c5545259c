import { launchChromium } from './launch.mjs'
import { median } from './click.mjs'
import { files, loadOnce, roundOf, serve, OURS_IN_MEMORY, WINDOW_MS } from './load.mjs'
import { loadTraceTable } from './load-trace-table.mjs'

/*
 * Where a page load's main-thread time goes (bench/load.mjs measures how much there is): the
 * same loads, Chromium at 4× with a fresh context each, interleaved with the page without a
 * library and with search-insights, each recorded with Chromium's tracing (devtools.timeline,
 * toplevel, the v8 categories with compile and GC, blink, loading, mojom). Every task of the
 * page's renderer main thread is split by what ran in it: each trace event's own time (its
 * duration less that of the events inside it) goes to the kind of work of the nearest event,
 * itself or one around it, that says what it is (KINDS). A library's figure per kind is the
 * median over its loads less the same for the page without a library.
 *
 * Tracing slows the page, so the times here are larger than bench/load.mjs's: compare the kinds
 * with each other and with search-insights', and take the totals from bench/load.mjs.
 *
 * `node bench/load-trace.mjs [loads]` prints the table; bench/run.mjs puts it with the others.
 */

export const TRACED_LOADS = 9

export const CATEGORIES = [
  'devtools.timeline',
  'toplevel',
  'v8',
  'v8.execute',
  'disabled-by-default-v8.compile',
  'disabled-by-default-v8.gc',
  'blink',
  'loading',
  'mojom'
]

/** The mojo interfaces whose messages say what a task was for. */
const LOCKS = /^blink\.mojom\.Lock/
const NETWORK = /^network\.mojom\.URLLoader|data_pipe/
const STORAGE = /^blink\.mojom\.(StorageArea|DomStorage)/

/**
 * The kinds of main-thread work, each with the test of a trace event that is of that kind, in
 * the order they are tried: an event inside JavaScript that reads cookies is the cookies', and
 * the JavaScript around it keeps only its own time.
 */
export const KINDS = [
  ['garbage collection', (event) => /^(V8\.GC|MinorGC|MajorGC|BlinkGC|V8\.Scavenge|V8\.MarkCompact|ScheduledGC)/.test(event.name)],
  [
    'compiling and parsing script',
    (event) =>
      event.name != 'V8.DeserializeContext' &&
      /^(V8\.(Compile|Parse|PreParse|CollectSourcePositions|Deserialize|Streaming|Finalize)|v8\.(compile|parseOnBackground|streamingCompile|produceCache|deserializeOnBackground)|FlushInstructionCache)/.test(
        event.name
      )
  ],
  ['cookies', (event) => event.name.startsWith('CookieJar::') || event.name.startsWith('RestrictedCookieManager')],
  ['localStorage', (event) => /^(StorageArea|CachedStorageArea|StorageNamespace|DOMStorage)/.test(event.name) || STORAGE.test(interfaceOf(event))],
  ['Web Locks', (event) => LOCKS.test(interfaceOf(event)) || postedBy(event, /modules\/locks\//)],
  [
    'requests and their answers (fetch, beacon)',
    (event) =>
      NETWORK.test(interfaceOf(event)) ||
      /^(ResourceFetcher::requestResource|ThrottlingURLLoader|URLLoader::|ResourceRequestSender|ResponseBodyLoader|MojoURLLoaderClient|ResourceLoader::|PingLoader|NavigatorBeacon)/.test(
        event.name
      )
  ],
  ['timers', (event) => event.name == 'TimerFire' || event.name == 'TimerBase::run' || postedBy(event, /dom_timer/)],
  ['microtasks (promise reactions)', (event) => event.name == 'RunMicrotasks' || event.name == 'BlinkScheduler_PerformMicrotaskCheckpoint'],
  ['JavaScript', (event) => /^(FunctionCall|EvaluateScript|v8\.run|v8\.callFunction|v8\.evaluateModule|v8\.callAsConstructor|V8\.Execute)$/.test(event.name)],
  [
    'the page: parsing, style, layout, paint',
    (event) =>
      /^(ParseHTML|HTMLDocumentParser|Layout|UpdateLayoutTree|Document::(UpdateStyle|recalcStyle|FinishedParsing)|Paint|PrePaint|Blink\.|LocalFrameView|WebFrameWidgetImpl|InlineNode|FontDataService|CSSParser)/.test(
        event.name
      )
  ],
  [
    'navigation and the new document',
    (event) =>
      /Navigation|AgentSchedulingGroup/.test(interfaceOf(event)) ||
      /^(DocumentLoader|Frame::Detach|LocalWindowProxy|V8\.DeserializeContext|CommitLoad)/.test(event.name)
  ]
]
export const OTHER = 'other tasks'

/** The mojo interface a task event was for, if it says (Chromium's `chrome_mojo_event_info`). */
function interfaceOf(event) {
  const info = event.args?.chrome_mojo_event_info
  return info?.mojo_interface_tag || info?.watcher_notify_interface_tag || ''
}

/** Whether a task was posted by a file of Chromium's that `file` matches (the task's `src_file`). */
const postedBy = (event, file) => file.test(event.args?.src_file || '')

const kindOf = (event) => KINDS.find(([, test]) => test(event))?.[0]

/**
 * Milliseconds of the page's main thread by kind of work, from a trace: the renderer main thread
 * that loaded `origin`, every task it ran (ThreadControllerImpl::RunTask, as CDP's TaskDuration
 * counts them) within WINDOW_MS of its first. `wall`: on the clock, as TaskDuration counts, so
 * the CPU throttling and any other process on the machine's cores stretch it. `cpu`: the thread's
 * own CPU time (the trace's thread duration), which neither stretches: the steadier figure on a
 * shared machine.
 */
export function breakdownOf(trace, origin) {
  const traceEvents = JSON.parse(trace).traceEvents
  const threadNames = new Map()
  for (const event of traceEvents) if (event.ph == 'M' && event.name == 'thread_name') threadNames.set(event.pid + ':' + event.tid, event.args.name)
  const threadOf = (event) => event.pid + ':' + event.tid
  const urlOf = (event) => String(event.args?.data?.url || event.args?.beginData?.url || '')
  const main = traceEvents.find((event) => threadNames.get(threadOf(event)) == 'CrRendererMain' && urlOf(event).startsWith(origin))
  if (!main) throw new Error('no renderer main thread loaded ' + origin)
  const own = traceEvents.filter((event) => event.ph == 'X' && threadOf(event) == threadOf(main)).sort((a, b) => a.ts - b.ts || b.dur - a.dur)
  const start = own.find((event) => event.name == 'ThreadControllerImpl::RunTask')?.ts ?? 0
  const wall = {}
  const cpu = {}
  // The CPU time by trace event, with the mojo interface or the script it was for: the detail behind the kinds.
  const events = {}
  const add = (kind, event, sign, owner = event) => {
    wall[kind] = (wall[kind] || 0) + (sign * event.dur) / 1000
    // Events without a thread time are counted by the clock.
    const ms = (sign * (event.tdur ?? event.dur)) / 1000
    cpu[kind] = (cpu[kind] || 0) + ms
    const name = owner.name + (interfaceOf(owner) ? ' ' + interfaceOf(owner) : '')
    events[name] = (events[name] || 0) + ms
  }
  // Events nest on one thread: walk them in order with the stack of those still open.
  const open = []
  let inTask = false
  for (const event of own) {
    while (open.length && open[open.length - 1].ts + open[open.length - 1].dur <= event.ts) open.pop()
    if (!open.length) inTask = event.name == 'ThreadControllerImpl::RunTask' && event.ts - start < WINDOW_MS * 1000
    if (!inTask) continue
    const parent = open[open.length - 1]
    event.kind = kindOf(event) || parent?.kind
    add(event.kind || OTHER, event, 1)
    if (parent) add(parent.kind || OTHER, event, -1, parent)
    open.push(event)
  }
  return { wall, cpu, events }
}

/** The trace events whose CPU time differs most from the page without a library's, medians over the loads: ms each. */
function eventsBeyond(runs, bare, count = 15) {
  const names = new Set(runs.concat(bare).flatMap((run) => Object.keys(run.kinds.events)))
  const medianOf = (loads, name) => median(loads.map((run) => run.kinds.events[name] || 0))
  const beyond = [...names].map((name) => [name, medianOf(runs, name) - medianOf(bare, name)])
  return Object.fromEntries(beyond.sort((a, b) => Math.abs(b[1]) - Math.abs(a[1])).slice(0, count))
}

const PAGES = ['none', 'discovery-feedback', OURS_IN_MEMORY, 'search-insights']

export async function loadTrace({ loads = TRACED_LOADS, pages = PAGES } = {}) {
  const scripts = await files()
  const server = await serve(scripts)
  const origin = 'http://127.0.0.1:' + server.address().port
  const browser = await launchChromium()
  const runs = Object.fromEntries(pages.map((name) => [name, []]))
  try {
    for (let round = 0; round < loads; round++) {
      for (const name of roundOf(pages, round)) {
        const { task, script, trace } = await loadOnce(browser, origin + '/' + encodeURIComponent(name), CATEGORIES)
        runs[name].push({ task, script, kinds: breakdownOf(trace.toString(), origin) })
      }
    }
  } finally {
    await browser.close()
    server.close()
  }
  const kinds = [...KINDS.map(([kind]) => kind), OTHER]
  const medianOf = (name, clock, kind) => median(runs[name].map((run) => run.kinds[clock][kind] || 0))
  const medians = (name) => ({
    task: median(runs[name].map((run) => run.task)),
    script: median(runs[name].map((run) => run.script)),
    wall: Object.fromEntries(kinds.map((kind) => [kind, medianOf(name, 'wall', kind)])),
    cpu: Object.fromEntries(kinds.map((kind) => [kind, medianOf(name, 'cpu', kind)]))
  })
  const base = medians('none')
  const less = (own, clock) => Object.fromEntries(kinds.map((kind) => [kind, own[clock][kind] - base[clock][kind]]))
  const libraries = {}
  for (const name of pages.filter((name) => name != 'none')) {
    const own = medians(name)
    libraries[name] = {
      taskMs: own.task - base.task,
      scriptMs: own.script - base.script,
      wall: less(own, 'wall'),
      cpu: less(own, 'cpu'),
      events: eventsBeyond(runs[name], runs.none),
      runs: runs[name].map(({ task, script, kinds }) => ({ task, script, wall: kinds.wall, cpu: kinds.cpu }))
    }
  }
  return { date: new Date().toISOString().slice(0, 10), loads, windowMs: WINDOW_MS, categories: CATEGORIES, base, libraries }
}

if (import.meta.url == 'file://' + process.argv[1]) {
  const result = await loadTrace({ loads: Number(process.argv[2]) || TRACED_LOADS })
  console.log(`\n${result.date}: page load traced, Chromium 4×, ${result.loads} interleaved loads each, medians less the page without a library, ms\n`)
  for (const line of loadTraceTable(result)) console.log(line)
  for (const name of Object.keys(result.libraries)) {
    console.log(`\n${name}: the trace events whose CPU time differs most from the page without a library's (ms, medians)\n`)
    for (const [event, ms] of Object.entries(result.libraries[name].events)) console.log(`${ms.toFixed(1).padStart(7)}  ${event}`)
  }
}
