import { expect, it, vi } from 'vitest'
import { quietConsole } from '../../support/console'
import { network, resetPage } from '../../support/helpers'
import { clickBothWays, command, loadTracker, ONE_CLICK_AND_THE_VIEW } from './script-tag-page'
import { runScriptTag } from '../../support/script-tags'

// A page that declared `var discoveryFeedback = …`: a global no accessor can replace. It stays on
// the window for good, so this file has a page of its own.

it('hears the page calls when the page declared the name with var', async () => {
  resetPage()
  vi.useFakeTimers()
  quietConsole()
  const net = network()
  const stub = function () {
    // eslint-disable-next-line prefer-rest-params -- the README's stub keeps `arguments` objects
    ;(stub.q ||= []).push(arguments)
  } as ((...args: unknown[]) => void) & { q?: unknown[] }
  Object.defineProperty(window, 'discoveryFeedback', { value: stub, writable: true, enumerable: true, configurable: false })
  await runScriptTag('data-layer')
  await loadTracker()
  expect(await clickBothWays(net)).toEqual(ONE_CLICK_AND_THE_VIEW)
  command().tracker!.destroy()
  vi.useRealTimers()
})
