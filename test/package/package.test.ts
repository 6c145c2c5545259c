// @vitest-environment node
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'

// These load the built files (npm test builds first) by the package's own name, through the
// `exports` map, in plain Node: no window, no document, as in server rendering.
const node = (args: string[]) => execFileSync(process.execPath, args, { cwd: process.cwd(), encoding: 'utf8' }).trim()

const USE = `
  const tracker = createTracker({ key: 'KEY', endpoint: 'https://collector.example/v3/feedback' })
  tracker.clickItem({ item_id: '1', variant_item_id: '1' })
  tracker.viewPage()
  tracker.destroy()
  tracker.flush().then(() => console.log(typeof createTracker, Object.keys(EVENTS).length, JSON.stringify(tracker.user)))
`

describe('the package in Node', () => {
  it('imports as an ES module by its name and does nothing on the server', () => {
    const out = node(['--input-type=module', '-e', `import { createTracker, EVENTS } from 'discovery-feedback'\n${USE}`])
    expect(out).toBe('function 7 {"uid":"","sid":""}')
  })

  it('requires as CommonJS by its name', () => {
    const out = node(['-e', `const { createTracker, EVENTS } = require('discovery-feedback')\n${USE}`])
    expect(out).toBe('function 7 {"uid":"","sid":""}')
  })

  it('imports and requires discovery-feedback/client with the client and the recommendation stores', () => {
    const use = `console.log(typeof createClient, JSON.stringify(createRecommendations(createClient({ key: 'K', baseUrl: '' })).getState()))`
    const expected = 'function {"status":"idle","items":[]}'
    expect(node(['--input-type=module', '-e', `import { createClient, createRecommendations } from 'discovery-feedback/client'\n${use}`])).toBe(expected)
    expect(node(['-e', `const { createClient, createRecommendations } = require('discovery-feedback/client')\n${use}`])).toBe(expected)
  })

  it('imports and requires discovery-feedback/shopify, whose connectShopify reports a broken setup instead of throwing', () => {
    // No Shopify here: an API without events and a relative endpoint, which a sandbox cannot resolve.
    const use = `console.error = () => {}
      const errors = []
      connectShopify({}, { key: 'K', endpoint: '/v3/feedback', onError: (error) => errors.push(error.field) })
      console.log(typeof connectShopify, errors.join())`
    const expected = 'function options.endpoint'
    expect(node(['--input-type=module', '-e', `import { connectShopify } from 'discovery-feedback/shopify'\n${use}`])).toBe(expected)
    expect(node(['-e', `const { connectShopify } = require('discovery-feedback/shopify')\n${use}`])).toBe(expected)
  })

  it('imports and requires discovery-feedback/collector, whose custom pixel code finds the built bundle from either', () => {
    const use = `const code = customPixelCode({ key: 'K', endpoint: 'https://shop.example/v3/feedback' })
      console.log(typeof startInspect, typeof createCollector, code.includes('discoveryFeedbackShopify.connectShopify(api'))`
    const expected = 'function function true'
    expect(node(['--input-type=module', '-e', `import { createCollector, customPixelCode, startInspect } from 'discovery-feedback/collector'\n${use}`])).toBe(
      expected
    )
    expect(node(['-e', `const { createCollector, customPixelCode, startInspect } = require('discovery-feedback/collector')\n${use}`])).toBe(expected)
  })

  it('resolves types first in every condition of the exports map, .d.cts for require, and is free of side effects', () => {
    const manifest = JSON.parse(readFileSync('package.json', 'utf8'))
    for (const entry of ['.', './client', './server', './shopify', './collector']) {
      const { import: esm, require: cjs } = manifest.exports[entry]
      expect(Object.keys(esm)[0]).toBe('types')
      expect(Object.keys(cjs)[0]).toBe('types')
      expect(esm.types).toMatch(/\.d\.ts$/)
      expect(cjs.types).toMatch(/\.d\.cts$/)
    }
    expect(manifest.sideEffects).toBe(false)
    expect(readFileSync(manifest.exports['.'].require.types, 'utf8')).toContain('createTracker')
  })

  it.each(['discovery-feedback', 'discovery-feedback-declarative', 'discovery-feedback-client', 'discovery-feedback-shopify'])(
    'builds %s.min.js as a script tag that needs neither eval nor new Function (strict CSP)',
    (name) => {
      const iife = readFileSync(`dist/${name}.min.js`, 'utf8')
      expect(iife).not.toMatch(/\beval\(|new Function|Function\(/)
      expect(iife).not.toMatch(/\bimport\b|\brequire\(/)
    }
  )

  it("starts the tracker's script tag with Chromium's compile hint, which it reads on the first line only", () => {
    // bench/load.mjs measures what it saves a page load; rollup.config.mjs says why.
    const [first] = readFileSync('dist/discovery-feedback.min.js', 'utf8').split('\n')
    expect(first).toBe('//# allFunctionsCalledOnLoad')
  })
})
