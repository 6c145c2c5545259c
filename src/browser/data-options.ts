import { attempt } from '../shared/attempt'
import type { TrackerOptions } from './types'

/** A warning of the script tag, in the console; a page that replaced console must not hear it as an exception. */
export const warn = (text: string) => attempt(() => console.warn('discovery-feedback: ' + text))

/**
 * The tracker's options from its script tag's data-* attributes (`data-key`, `data-endpoint`,
 * `data-flush-interval="2000"`, `data-auto-view-page="false"`, `data-format="spec"` …), named
 * as the dataset names them. Attributes are text: true, false and whole numbers become what
 * the options expect; the key stays text whatever it looks like. The tracker checks them like
 * any options.
 */
export function optionsFromDataset(data: DOMStringMap): Partial<TrackerOptions> {
  const options: Record<string, unknown> = {}
  for (const name of Object.keys(data)) {
    const value = data[name]!
    options[name] = name != 'key' && /^(true|false|\d+)$/.test(value) ? JSON.parse(value) : value
  }
  return options
}
