export { createTracker } from './tracker'
export { EVENTS, validate } from './rules'
export { trackDeclarative } from './declarative'
export type {
  CommandFunction,
  Commands,
  Envelope,
  EventName,
  EventProperties,
  FeedbackError,
  LineItem,
  Tracker,
  TrackerOptions,
  User
} from './types'
