import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    environment: 'jsdom',
    include: ['test/**/*.test.ts'],
    // Real-browser suites start Chromium and wait for beacons.
    testTimeout: 30000,
    hookTimeout: 30000
  }
})
