// `npx discovery-feedback shopify-pixel`: prints the code a merchant pastes into Shopify's custom
// pixel box (src/collector/custom-pixel.ts makes it).
import { parseArgs } from 'node:util'
import { customPixelCode } from '../dist/collector.mjs'

const USAGE = `Usage: discovery-feedback shopify-pixel --key <key> --endpoint <url> [options]

Prints the code to paste into Shopify's custom pixel box (Settings > Customer events).

  --key <key>             your API key
  --endpoint <url>        the collector's absolute URL
  --cookie-domain <d>     as the storefront tracker's cookieDomain ('auto' or a domain)
  --session-minutes <n>   as the storefront tracker's sessionMinutes
  --pages <which>         'checkout' (default) or 'all'
  -h, --help              this text`

/** `npx discovery-feedback shopify-pixel …`: prints the code, or says what is missing. */
export function printCustomPixel(args) {
  const fail = (message) => {
    console.error(`discovery-feedback: ${message}\n\n${USAGE}`)
    process.exit(2)
  }
  let values
  try {
    ;({ values } = parseArgs({
      args,
      options: {
        key: { type: 'string' },
        endpoint: { type: 'string' },
        'cookie-domain': { type: 'string' },
        'session-minutes': { type: 'string' },
        pages: { type: 'string' },
        help: { type: 'boolean', short: 'h' }
      }
    }))
  } catch (error) {
    fail(error.message)
  }
  if (values.help) {
    console.log(USAGE)
    process.exit(0)
  }
  if (!values.key) fail('--key is required')
  if (!/^https?:\/\//.test(values.endpoint || '')) fail('--endpoint must be an absolute http(s) URL: the pixel runs where no page can resolve a relative one')
  if (values.pages && !['checkout', 'all'].includes(values.pages)) fail("--pages must be 'checkout' or 'all'")
  const minutes = Number(values['session-minutes'])
  if (values['session-minutes'] != null && !(minutes > 0)) fail('--session-minutes must be a positive number')
  const options = { key: values.key, endpoint: values.endpoint }
  if (values['cookie-domain']) options.cookieDomain = values['cookie-domain']
  if (values['session-minutes'] != null) options.sessionMinutes = minutes
  if (values.pages) options.pages = values.pages
  process.stdout.write(customPixelCode(options))
}
