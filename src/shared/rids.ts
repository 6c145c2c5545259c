import { encode } from './json'

/**
 * Remembers which response showed which item or suggestion, so a click can carry that
 * response's `meta.rid` (SPEC "Links to operations") without the shop carrying it by hand.
 * Kept in sessionStorage: a click on the next page of the session still finds it.
 */

const KEY = 'df_rids'
// The last 50 responses, most recent first: enough for a session's search and shelves, and a
// few kilobytes at most.
const MAX_RESPONSES = 50

// Each response by the tracker's property that carries what it showed.
// A response without items (or suggestions) has no list of them.
type Seen = { rid: string; item_id?: string[]; suggestion?: string[] }

let memory: Seen[] = []

// Read at each use: another page of the tab may have remembered a response since. Nothing
// stored yet (JSON.parse reads null as null), storage blocked or unreadable: the page's memory.
function load(): Seen[] {
  try {
    const stored = JSON.parse(sessionStorage.getItem(KEY)!)
    if (Array.isArray(stored)) memory = stored
  } catch {
    // Blocked or unreadable: the page's memory serves.
  }
  return memory
}

/** What a discovery response holds that is remembered here; the response is the service's JSON, unchecked. */
type Answer = { meta?: { rid?: unknown }; items?: { id: unknown }[]; suggestions?: { value: unknown }[] } | undefined

/** Records a response that has a rid: the ids of the items and suggestions it returned. */
export function remember(answer: Answer) {
  const rid = answer?.meta?.rid
  if (typeof rid != 'string') return
  memory = [
    {
      rid,
      item_id: answer!.items?.slice(0, 200).map((item) => '' + item.id),
      suggestion: answer!.suggestions?.slice(0, 50).map((suggestion) => '' + suggestion.value)
    },
    ...load().filter((seen) => seen.rid != rid)
  ].slice(0, MAX_RESPONSES)
  try {
    sessionStorage.setItem(KEY, encode(memory))
  } catch {
    // Quota or blocked: the page's memory still links this page's clicks.
  }
}

/** The rid of the most recent response that showed this item id (or suggestion); ids are strings. */
export function ridFor(property: 'item_id' | 'suggestion', id: unknown): string | undefined {
  return load().find((seen) => seen[property]?.includes(id as string))?.rid
}
