import { discoveryError } from './error'
import type {
  DiscoveryClient,
  DiscoveryError,
  RecommendationEvent,
  RecommendationEventName,
  RecommendationOptions,
  RecommendationState,
  RecommendationStore
} from './types'

/** Fields of a payload or a request body. Each passes its rule in FIELDS before it is kept. */
type Body = Record<string, any>

/** A payload field's rule. */
interface FieldRule {
  test: (value: any) => boolean
  /** What the rule asks for, as a refusal states it after "must be". */
  mustBe: string
  /** What the route is sent instead of the value given, where the two differ. */
  convert?: (value: any) => unknown
}

const isText = (value: unknown) => typeof value == 'string' && value != ''
const isId = (value: unknown) => isText(value) || Number.isSafeInteger(value)
const isObject = (value: unknown): value is Body => !!value && typeof value == 'object' && !Array.isArray(value)

// Up to nine digits: within the routes' int32. offset and limit are text in SPEC's store listing
// and int32 on the routes: either comes in, a number goes out.
const COUNT: FieldRule = {
  test: (value) => (typeof value == 'number' || typeof value == 'string') && /^\d{1,9}$/.test(String(value)),
  mustBe: 'an integer 0-999999999 or its text',
  convert: Number
}

/* The rules of the payload fields. A field without a rule is kept as it is. */
const FIELDS: Record<string, FieldRule> = {
  offset: COUNT,
  limit: COUNT,
  item_id: { test: isId, mustBe: 'a non-empty string or an integer', convert: String },
  item_ids: {
    test: (value) => Array.isArray(value) && value.length > 0 && value.every(isId),
    mustBe: 'a non-empty array of strings or integers',
    convert: (ids: unknown[]) => ids.map(String)
  },
  slot: { test: isText, mustBe: 'a non-empty string' },
  user: { test: isObject, mustBe: 'an object' },
  log: { test: (value) => typeof value == 'boolean', mustBe: 'true or false' }
}

/** The store events that send a request. request and setRequestBody are the store's own. */
type RouteEventName = Exclude<RecommendationEventName, 'request' | 'setRequestBody'>

/** The client methods whose route has no path argument, and those whose route has one. */
type PlainMethod = 'newest' | 'latestViewed' | 'trending' | 'featured'
type PathMethod = 'recommend' | 'viewedViewed' | 'viewedBought' | 'boughtBought'

/** How a store event asks its route. */
interface EventRoute {
  /** The client method that asks the route (SPEC "Endpoints"): one of PlainMethod, or of PathMethod with inPath. */
  method: PlainMethod | PathMethod
  /** The field that goes into the route's path. The payload must hold it. */
  inPath?: 'slot' | 'item_id' | 'item_ids'
  /** The option that may name a slot of the slot route for the event to ask instead of its method's route. */
  slotOption?: 'trendingSlot' | 'featuredSlot'
  /** Every field its payload may hold. */
  fields: string[]
}

/*
 * SPEC "Client-library recommendation store events" and the routes they ask. request and
 * setRequestBody are the store's own and ask no route of their own. SPEC shows no route behind
 * trending and featured: they ask the routes the service's own SDK asks, or the slot their
 * option names. Literals only, so that a bundler drops the table when only createClient is imported.
 */
const EVENTS: Record<RouteEventName, EventRoute> & { request: null; setRequestBody: null } = {
  request: null,
  setRequestBody: null,
  newest: { method: 'newest', fields: ['offset', 'limit', 'user', 'log'] },
  trending: { method: 'trending', slotOption: 'trendingSlot', fields: ['offset', 'limit', 'user', 'log'] },
  latest: { method: 'latestViewed', fields: ['offset', 'limit', 'user', 'log'] },
  viewed: { method: 'viewedViewed', inPath: 'item_id', fields: ['item_id', 'offset', 'limit', 'user', 'log'] },
  bought: { method: 'viewedBought', inPath: 'item_id', fields: ['item_id', 'offset', 'limit', 'user', 'log'] },
  frequentlyPurchased: { method: 'boughtBought', inPath: 'item_ids', fields: ['item_ids', 'offset', 'limit', 'user', 'log'] },
  predefined: { method: 'recommend', inPath: 'slot', fields: ['slot', 'item_id', 'item_ids', 'offset', 'limit', 'user', 'log'] },
  featured: { method: 'featured', slotOption: 'featuredSlot', fields: ['user', 'log'] }
}

const refuse = (event: string, field: string, rule: string) => discoveryError(event + ': ' + field + ' ' + rule, { kind: 'invalid', event, field })

/**
 * The fields of a payload merged into a copy of a request body, each as the route takes it.
 * A field that breaks its rule refuses the event, and the body stays as it was. An event's
 * payload may hold only its allowed fields, and its null ones are left out. setRequestBody
 * (no allowed list) takes any field, and null removes it.
 */
function merge(event: string, base: Body, payload: Body, allowed?: string[]): Body {
  const body = { ...base }
  for (const field of Object.keys(payload)) {
    if (allowed && !allowed.includes(field)) throw refuse(event, field, 'is not one of ' + allowed.join(', '))
    const value = payload[field]
    const rule = Object.hasOwn(FIELDS, field) ? FIELDS[field] : undefined
    if (value == null) {
      if (!allowed) delete body[field]
    } else if (rule && !rule.test(value)) {
      throw refuse(event, field, 'must be ' + rule.mustBe)
    } else {
      body[field] = rule?.convert ? rule.convert(value) : value
    }
  }
  return body
}

/**
 * A recommendation shelf's store: emit SPEC's store events, read the state, subscribe to its
 * changes. The shape is what React's useSyncExternalStore and Vue's shallowRef take as is.
 * Each answer goes through the client, so its rid reaches the clicks on the shelf's tiles.
 * @param client - The discovery client the store's requests go through.
 * @param options - The store's user, its slots for trending and featured, and its error handler.
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
    } catch {
      // An onError that throws changes nothing in the store.
    }
  }

  /**
   * Runs one route event whose payload passed its rules: the request replaces the one in flight,
   * and its answer (or failure) becomes the store's state.
   */
  const request = (name: RouteEventName, fields: Body) => {
    const { method, inPath = '', slotOption, fields: allowed } = EVENTS[name]
    if (inPath && fields[inPath] == null) throw refuse(name, inPath, 'is required')
    // The required field goes into the path, and out of the body. An event without a path
    // field takes out the key '' instead, which no SPEC field has.
    const { [inPath]: pathArgument, user = options.user, ...body } = merge(name, requestBody, fields, allowed)
    // A user is sent with a numeric ip as text: SPEC's store listing types ip as a number,
    // every other listing as a string.
    if (user) body.user = user.ip == null ? user : { ...user, ip: String(user.ip) }
    current?.abort()
    current = new AbortController()
    const { signal } = current
    // The payload passed its event's rules above, which the compiler cannot follow through EVENTS.
    set({ status: 'loading', error: undefined, request: { name, payload: fields } as RecommendationEvent })
    // trending and featured ask the slot their option names, where it names one.
    const slot = slotOption && options[slotOption]
    const answer = slot
      ? client.recommend(slot, body, { signal })
      : inPath
        ? client[method as PathMethod](pathArgument, body, { signal })
        : client[method as PlainMethod](body, { signal })
    answer.then(
      (json) => {
        // An answer without SPEC's items (null, an object) shows as an empty shelf, never a crash.
        if (!signal.aborted) set({ status: 'ready', items: Array.isArray(json?.items) ? json.items : [], meta: json?.meta })
      },
      (error: DiscoveryError) => {
        if (!signal.aborted) fail(error)
      }
    )
  }

  const store: RecommendationStore = {
    emit(nameOrEvent: unknown, payloadArgument?: unknown): RecommendationStore {
      // The event a refusal names: the one emitted and, for request, the one it runs again. The
      // compiler keeps it unknown, as it does not narrow an unknown variable when it is assigned:
      // hence the casts below.
      let name = nameOrEvent
      let payload = payloadArgument
      try {
        // SPEC's event object form: { name, payload }.
        if (isObject(nameOrEvent)) ({ name, payload } = nameOrEvent)
        // A name is looked up as a property key, so one that is no string but converts to an
        // event's name (['newest']) is that event, as it always was.
        if (!Object.hasOwn(EVENTS, name as PropertyKey)) {
          throw refuse(typeof name == 'string' ? name : 'emit', 'name', 'must be one of ' + Object.keys(EVENTS).join(', '))
        }
        // A copy, each field read once; no payload is an empty one.
        let fields: Body = { ...(payload as Body) }
        if ((payload != null && !isObject(payload)) || (name == 'setRequestBody' && !isObject(fields.payload)))
          throw refuse(name as string, 'payload', 'must be an object')
        if (name == 'setRequestBody') {
          // The same rules as in an event's payload.
          requestBody = merge(name as string, requestBody, fields.payload)
        } else {
          if (name == 'request') {
            // Again what was last asked, with these fields; a slot asks that predefined slot.
            const last = state.request
            name = fields.slot != null ? 'predefined' : last?.name
            if (!name) throw refuse('request', 'slot', 'is required on a first request')
            if (last?.name == name) fields = { ...last.payload, ...fields }
          }
          // name was checked above to be a store event's, and request has become the event it runs
          // again: a route event.
          request(name as RouteEventName, fields)
        }
      } catch (error: any) {
        // Anything else was thrown by the payload as it was read, or by the request before
        // anything was sent (a value the request body cannot hold, such as a cycle).
        const refused: DiscoveryError =
          error?.kind == 'invalid' ? error : refuse(typeof name == 'string' ? name : 'emit', 'payload', 'could not be used: ' + error)
        console.error(refused.message)
        // A refused event supersedes the request in flight as a sent one would.
        current?.abort()
        fail(refused)
      }
      return store
    },
    subscribe(listener) {
      listeners.add(listener)
      return () => {
        listeners.delete(listener)
      }
    },
    getState: () => state
  }
  return store
}
