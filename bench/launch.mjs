import { chromium } from 'playwright-core'

/**
 * Debian's Chromium, headless, with nothing of its own running in the background: no
 * networking of its own (this machine's network is closed), no component or sync updates.
 */
export const launchChromium = () =>
  chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync'
    ]
  })
