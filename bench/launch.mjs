import { chromium } from 'playwright-core'

/**
 * How Debian's Chromium runs here, for the benchmarks and the tests alike: headless, with nothing
 * of its own in the background (no networking of its own, no component or sync updates).
 */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync'
]

export const launchChromium = () => chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS })
