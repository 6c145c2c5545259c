// The table of bench/load-trace.mjs's result, apart from it: the docs build reads it without the bench's dependencies.

/**
 * bench/load-trace.mjs's result as a Markdown table: a column per page, the kinds of work in rows,
 * by the thread's CPU time and on the clock; for the console and the benchmarks page (scripts/docs.mjs).
 */
export function loadTraceTable(result) {
  const names = Object.keys(result.libraries)
  const cell = (value) => value.toFixed(1)
  const lines = [`| kind of work | the page without a library | ${names.join(' | ')} |`, `|---|---|${names.map(() => '---|').join('')}`]
  const row = (label, base, of) => lines.push(`| ${label} | ${cell(base)} | ${names.map((name) => cell(of(result.libraries[name]))).join(' | ')} |`)
  row('all tasks on the clock (CDP TaskDuration)', result.base.task, (library) => library.taskMs)
  row('JavaScript on the clock (CDP ScriptDuration)', result.base.script, (library) => library.scriptMs)
  for (const clock of ['cpu', 'wall']) {
    lines.push(`| **${clock == 'cpu' ? "by kind, the thread's CPU time" : 'by kind, on the clock'}** | |${names.map(() => ' |').join('')}`)
    for (const kind of Object.keys(result.base[clock])) row(kind, result.base[clock][kind], (library) => library[clock][kind])
  }
  return lines
}
