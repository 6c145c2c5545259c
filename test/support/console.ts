import { vi } from 'vitest'

type ConsoleMethod = 'error' | 'warn' | 'log' | 'info' | 'debug'

/**
 * Replaces a console method with a spy that prints nothing, so that the errors a test provokes
 * on purpose stay out of the output. It returns the spy, so a test can read what was written.
 * The spy stays until vi.restoreAllMocks() runs, which the suites do after each test.
 */
export function quietConsole(method: ConsoleMethod = 'error') {
  return vi.spyOn(console, method).mockImplementation(() => {})
}
