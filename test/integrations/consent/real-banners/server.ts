import { readFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import { normalize } from 'node:path'

/*
 * Serves the pages of the real-banner tests on their own origin: the banners as npm installed
 * them (unmodified, each under /vendor/<banner>/, since tarteaucitron loads its services and
 * languages from beside its own script), our built script tag, and the pages a test registers.
 */

const root = new URL('../../../../', import.meta.url)

/** Each banner's folder as published, by the name its URLs use. */
const VENDOR: Record<string, string> = {
  cookieconsent: 'node_modules/vanilla-cookieconsent/dist/',
  klaro: 'node_modules/klaro/dist/',
  tarteaucitron: 'node_modules/tarteaucitronjs/'
}

const TYPES: Record<string, string> = { js: 'text/javascript', css: 'text/css', html: 'text/html; charset=utf-8' }

/** The file a URL path names, or undefined: only inside a banner's folder. */
function fileOf(path: string): URL | undefined {
  const [, vendor, banner, ...rest] = path.split('/')
  const folder = vendor == 'vendor' ? VENDOR[banner] : undefined
  const inside = normalize(rest.join('/'))
  if (!folder || inside.startsWith('..')) return undefined
  return new URL(folder + inside, root)
}

export async function startBannerPages() {
  // Read once: a build that runs meanwhile rewrites dist/, and a page must not get half a file.
  const scriptTag = await readFile(new URL('dist/discovery-feedback.min.js', root))
  const pages = new Map<string, string>()
  const server: Server = createServer(async (request, response) => {
    const path = new URL(request.url!, 'http://x').pathname
    if (path == '/favicon.ico') return void response.writeHead(204).end()
    if (pages.has(path)) return void response.writeHead(200, { 'content-type': TYPES.html }).end(pages.get(path))
    if (path == '/discovery-feedback.min.js') return void response.writeHead(200, { 'content-type': TYPES.js }).end(scriptTag)
    const file = fileOf(path)
    const body = file && (await readFile(file).catch(() => undefined))
    if (!body) return void response.writeHead(404).end()
    response.writeHead(200, { 'content-type': TYPES[path.split('.').pop()!] || 'application/octet-stream' }).end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    origin: `http://localhost:${(server.address() as { port: number }).port}`,
    page: (path: string, html: string) => pages.set(path, '<!doctype html><meta charset="utf-8">' + html),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
