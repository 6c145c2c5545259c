import { vi } from 'vitest'

// The script tags as a jsdom page runs them: the README's stub, and each file of
// src/script-tags/ run as the browser runs a file, reading its data-* attributes.

/** The README's stub, verbatim: the line a page runs before the tracker's tag. */
export const README_STUB =
  'window.discoveryFeedback=typeof discoveryFeedback=="function"?discoveryFeedback:function(){(discoveryFeedback.q=discoveryFeedback.q||[]).push(arguments)};'

/** Runs the README's stub as the page would. */
export const installStub = () => new Function(README_STUB)()

/** Runs a script-tag entry as the browser runs its file: fresh, with `document.currentScript` carrying its data-* attributes. */
export async function runScriptTag(entry: 'tracker' | 'data-layer', dataset: Record<string, string> = {}) {
  const script = document.createElement('script')
  Object.assign(script.dataset, dataset)
  Object.defineProperty(document, 'currentScript', { value: script, configurable: true })
  vi.resetModules()
  await import(entry == 'tracker' ? '../../src/script-tags/tracker' : '../../src/script-tags/data-layer')
  Object.defineProperty(document, 'currentScript', { value: null, configurable: true })
}
