import { feedbackError } from '../shared/error'
import { check, checkUser } from '../shared/rules'
import type { FeedbackError, User } from '../shared/types'
import type { TrackerOptions } from './types'

/**
 * Reads a tracker's options once, into a copy: getters on the caller's object run here,
 * inside a guard, and never again. Returns the settings, the shopper fields the site gave, and
 * the fault that breaks the tracker, if any: the tracker reports it (throws it when `strict`)
 * and refuses every call with it. Without a window (server rendering) nothing is checked, as
 * nothing will run.
 */
export function readOptions(
  options: TrackerOptions,
  browser: boolean
): [settings: TrackerOptions, user: Partial<User>, broken?: FeedbackError] {
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
      check('init', { key: 's', endpoint: 's' }, settings, 'options', '')
      if (settings.user != null) user = checkUser('init', settings.user)
    } catch (error) {
      broken = error as FeedbackError
    }
  }
  return [settings, user, broken]
}
