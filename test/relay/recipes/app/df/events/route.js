// app/df/events/route.js: the relay as a Next.js App Router route handler.
import { relay } from '../relay.js'

export const POST = (request) => relay.fetch(request)
export const OPTIONS = (request) => relay.fetch(request)
// The service's own feedback library sends by image where a browser has no sendBeacon.
export const GET = (request) => relay.fetch(request)
