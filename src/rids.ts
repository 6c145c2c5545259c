import { encode } from './shared/json'

/**
 * Remembers which response showed which item or suggestion, so a click can carry that
 * response's `meta.rid` (SPEC "Links to operations") without the shop carrying it by hand.
 * Kept in sessionStorage: a click on the next page of the session still finds it.
 */

const KEY = 'df_rids'
// The last 50 responses, most recent first: enough for a session's search and shelves, and a
// few kilobytes at most.
const MAX_RESPONSES = 50

type Seen = [rid: string, items: string[], suggestions: string[]]

let memory: Seen[] = []

const session = (): Storage | undefined => {
  try {
    return sessionStorage
  } catch {
    // Storage blocked: memory only.
  }
}

function load(): Seen[] {
  const storage = session()
  try {
    const stored = storage && JSON.parse(storage.getItem(KEY) || '[]')
    if (Array.isArray(stored)) memory = stored
  } catch {
    // Unreadable: start over.
  }
  return memory
}

/** Records a response: its rid and the ids of the items and suggestions it returned. */
export function remember(rid: string, items: string[], suggestions: string[]) {
  const seen = [[rid, items.slice(0, 200), suggestions.slice(0, 50)] as Seen, ...load().filter(([other]) => other != rid)].slice(0, MAX_RESPONSES)
  memory = seen
  try {
    session()?.setItem(KEY, encode(seen))
  } catch {
    // Quota or blocked: the page's memory still links this page's clicks.
  }
}

/** The rid of the most recent response that showed this item (or suggestion). */
export function ridFor(kind: 'item' | 'suggestion', id: unknown): string | undefined {
  if (typeof id != 'string') return
  const found = load().find(([, items, suggestions]) => (kind == 'item' ? items : suggestions).includes(id))
  return found && found[0]
}
