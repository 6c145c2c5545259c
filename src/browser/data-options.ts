import { attempt } from '../shared/attempt'
import { nearestName } from './nearest-name'
import type { TrackerOptions } from './types'

/** The options a data-* attribute can set: all but the function and the object. */
type DataOption = Exclude<keyof TrackerOptions, 'onError' | 'user'>

/**
 * Every option a data-* attribute may set, by its dataset name: a Record, so that the compiler
 * fails while an option of TrackerOptions is missing here.
 */
const DATA_OPTIONS: Record<DataOption, 1> = {
  key: 1,
  endpoint: 1,
  format: 1,
  sessionMinutes: 1,
  autoViewPage: 1,
  hashRouting: 1,
  cookieDomain: 1,
  cookieSecure: 1,
  cookieSameSite: 1,
  maxBatchEvents: 1,
  maxBatchBytes: 1,
  flushInterval: 1,
  consent: 1,
  ignoreGlobalPrivacyControl: 1,
  respectDoNotTrack: 1,
  storage: 1,
  debug: 1,
  strict: 1
}

/** The attribute of a dataset name, as the page writes it: `autoViewPage` is `data-auto-view-page`. */
export const attributeOf = (name: string) => 'data-' + name.replace(/[A-Z]/g, (capital) => '-' + capital.toLowerCase())

/** A warning of the script tag, in the console; a page that replaced console must not hear it as an exception. */
export const warn = (text: string) => attempt(() => console.warn('discovery-feedback: ' + text))

/**
 * The tracker's options from its script tag's data-* attributes (`data-key`, `data-endpoint`,
 * `data-flush-interval="2000"`, `data-auto-view-page="false"`, `data-format="spec"` …), named
 * as the dataset names them. Attributes are text: true, false and whole numbers become what
 * the options expect; the key stays text whatever it looks like. The tracker checks them like
 * any options.
 *
 * A misspelt attribute would leave its option at the default without a word: one near an
 * option's name is named, with the option's (`data-kye`: did you mean `data-key`?). One far
 * from all of them is left alone, as another script's.
 */
export function optionsFromDataset(data: DOMStringMap): Partial<TrackerOptions> {
  const options: Record<string, unknown> = {}
  for (const name of Object.keys(data)) {
    const value = data[name]!
    options[name] = name != 'key' && /^(true|false|\d+)$/.test(value) ? JSON.parse(value) : value
    const nearest = nearestName(name, Object.keys(DATA_OPTIONS))
    if (nearest && nearest != name) warn(attributeOf(name) + ' is unknown: did you mean ' + attributeOf(nearest) + '?')
  }
  return options
}
