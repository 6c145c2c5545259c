import { feedbackError } from '../shared/error'
import { check, checkUser, Kind } from '../shared/rules'
import type { FeedbackError, User } from '../shared/types'
import type { TrackerOptions } from './types'

/** A tracker's options as read once. */
export interface ReadOptions {
  settings: TrackerOptions
  /** The shopper fields the site gave (`options.user`), checked. */
  user: Partial<User>
  /** The fault that breaks the tracker, if any: reported (thrown when `strict`), and every call is refused with it. */
  broken?: FeedbackError
}

/**
 * Reads a tracker's options once, into a copy: getters on the caller's object run here,
 * inside a guard, and never again. Without a window (server rendering) nothing is checked, as
 * nothing will run.
 */
export function readOptions(options: TrackerOptions, browser: boolean): ReadOptions {
  let settings = {} as TrackerOptions
  let user: Partial<User> = {}
  let broken: FeedbackError | undefined
  try {
    settings = { ...options }
  } catch {
    broken = feedbackError('init', 'options', 'could not be read')
  }
  if (browser && !broken) {
    try {
      // What a tracker cannot work without.
      check('init', { key: Kind.text, endpoint: Kind.text }, settings, 'options', '')
      if (settings.user != null) user = checkUser('init', settings.user)
    } catch (error) {
      broken = error as FeedbackError
    }
  }
  return { settings, user, broken }
}
