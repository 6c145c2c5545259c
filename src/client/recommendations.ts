import { discoveryError } from './error'
import type {
  DiscoveryClient,
  DiscoveryError,
  RecommendationEvent,
  RecommendationOptions,
  RecommendationState,
  RecommendationStore,
  RecommendResponse
} from './types'

type Body = Record<string, any>
type Rule = [test: (value: any) => boolean, rule: string, convert?: (value: any) => unknown]

const text = (value: unknown) => typeof value == 'string' && value != ''
const id = (value: unknown) => text(value) || Number.isSafeInteger(value)
const isObject = (value: unknown): value is Body => !!value && typeof value == 'object' && !Array.isArray(value)
// Up to nine digits: within the routes' int32. offset and limit are text in SPEC's store listing
// and int32 on the routes: either comes in, a number goes out.
const COUNT: Rule = [(value) => (typeof value == 'number' || typeof value == 'string') && /^\d{1,9}$/.test(value as string), 'an integer 0-999999999 or its text', Number]

/* Payload fields: the test, the rule it states, and what the route is sent. */
const FIELDS: Record<string, Rule> = {
  offset: COUNT,
  limit: COUNT,
  item_id: [id, 'a non-empty string or an integer', String],
  item_ids: [(value) => Array.isArray(value) && value.length > 0 && value.every(id), 'a non-empty array of strings or integers', (ids) => ids.map(String)],
  slot: [text, 'a non-empty string'],
  user: [isObject, 'an object'],
  log: [(value) => typeof value == 'boolean', 'true or false']
}

/*
 * SPEC "Client-library recommendation store events", each with the client method that asks its
 * route (SPEC "Endpoints"), its required field, which goes into the path (none: an empty word),
 * and then every field its payload may hold, the required one too; user and log go with every
 * event. SPEC shows no route behind trending and featured: they ask a slot of the slot route,
 * named in the options (trendingSlot, featuredSlot). request and setRequestBody are the store's
 * own. Literal strings only, so that a bundler drops the table when only createClient is imported.
 */
const EVENTS: Record<string, string> = {
  request: '',
  setRequestBody: '',
  newest: 'newest  offset limit',
  trending: 'recommend  offset limit',
  latest: 'latestViewed  offset limit',
  viewed: 'viewedViewed item_id item_id offset limit',
  bought: 'viewedBought item_id item_id offset limit',
  frequentlyPurchased: 'boughtBought item_ids item_ids offset limit',
  predefined: 'recommend slot slot item_id item_ids offset limit',
  featured: 'recommend '
}

const refuse = (event: string, field: string, rule: string) => discoveryError(event + ': ' + field + ' ' + rule, { kind: 'invalid', event, field })

/**
 * The fields of a payload merged into a copy of a request body, each as the route takes it;
 * one that breaks its rule refuses the event, and the body stays as it was. An event's payload
 * may hold only its own fields, and leaves out the null ones; setRequestBody takes any field,
 * and null removes it.
 */
function merge(event: string, base: Body, payload: Body, names?: string[]) {
  const body = { ...base }
  for (const key of Object.keys(payload)) {
    if (names && !names.includes(key)) throw refuse(event, key, 'is not one of ' + names.join(', '))
    const value = payload[key]
    const [test, rule, convert] = Object.hasOwn(FIELDS, key) ? FIELDS[key] : [() => true]
    if (value == null) {
      if (!names) delete body[key]
    } else if (!test(value)) throw refuse(event, key, 'must be ' + rule)
    else body[key] = convert ? convert(value) : value
  }
  return body
}

/**
 * A recommendation shelf's store: emit SPEC's store events, read the state, subscribe to its
 * changes. The shape is what React's useSyncExternalStore and Vue's shallowRef take as is.
 * Each answer goes through the client, so its rid reaches the clicks on the shelf's tiles.
 */
export function createRecommendations(client: DiscoveryClient, options: RecommendationOptions = {}): RecommendationStore {
  let state: RecommendationState = { status: 'idle', items: [] }
  let requestBody: Body = {}
  // The request in flight: a newer emit aborts it, and the answer of an aborted one never lands.
  let current: AbortController | undefined
  const listeners = new Set<() => void>()

  const set = (next: Partial<RecommendationState>) => {
    state = { ...state, ...next }
    // A copy: a listener that subscribes another during the call does not run it now.
    for (const listener of [...listeners]) {
      try {
        listener()
      } catch (error) {
        console.error(error)
      }
    }
  }
  const fail = (error: DiscoveryError) => {
    set({ status: 'error', error })
    try {
      options.onError?.(error)
    } catch {}
  }

  const store: RecommendationStore = {
    emit(name: any, payload?: any) {
      try {
        // SPEC's event object form: { name, payload }.
        if (isObject(name)) ({ name, payload } = name)
        if (!Object.hasOwn(EVENTS, name)) throw refuse(typeof name == 'string' ? name : 'emit', 'name', 'must be one of ' + Object.keys(EVENTS).join(', '))
        let fields: Body = { ...payload }
        if ((payload != null && !isObject(payload)) || (name == 'setRequestBody' && !isObject(fields.payload))) throw refuse(name, 'payload', 'must be an object')
        // The same rules as in an event's payload.
        if (name == 'setRequestBody') requestBody = merge(name, requestBody, fields.payload)
        else {
          if (name == 'request') {
            // Again what was last asked, with these fields; a slot asks that predefined slot.
            const last = state.request
            name = fields.slot != null ? 'predefined' : last?.name
            if (!name) throw refuse('request', 'slot', 'is required on a first request')
            if (last?.name == name) fields = { ...last!.payload, ...fields }
          }
          const [method, required, ...names] = (EVENTS[name] + ' user log').split(' ')
          if (required && fields[required] == null) throw refuse(name, required, 'is required')
          // The required field goes into the path; trending and featured ask their slot. A user is
          // sent with a numeric ip as text: SPEC's store listing types ip as a number, every other
          // listing as a string.
          const { [required]: inPath = (options as Body)[name + 'Slot'] || name, user = options.user, ...body } = merge(name, requestBody, fields, names)
          if (user) body.user = user.ip == null ? user : { ...user, ip: String(user.ip) }
          current?.abort()
          const { signal } = (current = new AbortController())
          set({ status: 'loading', error: undefined, request: { name, payload: fields } as RecommendationEvent })
          ;(client[method as keyof DiscoveryClient] as (...args: unknown[]) => Promise<RecommendResponse>)(...(required || method == 'recommend' ? [inPath] : []), body, { signal }).then(
            // An answer without SPEC's items (null, an object) shows as an empty shelf, never a crash.
            (json) => !signal.aborted && set({ status: 'ready', items: Array.isArray(json?.items) ? json.items : [], meta: json?.meta }),
            (error: DiscoveryError) => !signal.aborted && fail(error)
          )
        }
      } catch (error: any) {
        // Anything else was thrown by the payload as it was read, or by the request before anything
        // was sent (a value the request body cannot hold, such as a cycle).
        const refused: DiscoveryError = error?.kind == 'invalid' ? error : refuse(typeof name == 'string' ? name : 'emit', 'payload', 'could not be used: ' + error)
        console.error(refused.message)
        // A refused event supersedes the request in flight as a sent one would.
        current?.abort()
        fail(refused)
      }
      return store
    },
    subscribe(listener) {
      listeners.add(listener)
      return () => void listeners.delete(listener)
    },
    getState: () => state
  }
  return store
}
