// The code a merchant pastes into Shopify's custom pixel box (Settings → Customer events → Add
// custom pixel), where nothing can be imported: the pixel bundle itself, then the one call that
// connects it. `npx discovery-feedback shopify-pixel` prints it; the demo's checkout runs it.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'

/**
 * The package's own folder, found by its name (Node resolves a package's name from inside it),
 * so that the built entry and its source both find the built bundle.
 */
const packageFile = (path: string) => new URL(path, pathToFileURL(createRequire(import.meta.url).resolve('discovery-feedback/package.json')))

/** The custom pixel's options that JSON can carry (those of connectShopify: key, endpoint, cookieDomain, sessionMinutes, pages …). */
export type CustomPixelOptions = Record<string, unknown> & { key: string; endpoint: string }

/**
 * The custom pixel's code for `options`. Shopify runs it inside a function that gives it `api`,
 * the Standard API. It reads the built bundle, dist/discovery-feedback-shopify.min.js.
 * @param options - The pixel's options (`connectShopify`'s), `key` and `endpoint` among them.
 */
export function customPixelCode(options: CustomPixelOptions): string {
  const { version } = JSON.parse(readFileSync(packageFile('package.json'), 'utf8')) as { version: string }
  const bundle = readFileSync(packageFile('dist/discovery-feedback-shopify.min.js'), 'utf8')
  return `// discovery-feedback ${version}: sends this shop's checkout to the collector, with the storefront's shopper.
// Paste all of it into Settings > Customer events > Add custom pixel. docs/guide/shopify.md says what it sends.
${bundle.trim()}
discoveryFeedbackShopify.connectShopify(api, ${JSON.stringify(options, null, 2)})
`
}
