// @vitest-environment node
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

// `npx discovery-feedback inspect` as a user gets it: the package's files as `npm pack` would
// ship them (its dependencies beside them), the bin started on a free port and stopped.
let packageDir: string
let bin: string

beforeAll(() => {
  const manifest = JSON.parse(readFileSync('package.json', 'utf8'))
  const npm = process.platform == 'win32' ? 'npm.cmd' : 'npm'
  const [{ files }] = JSON.parse(
    execFileSync(npm, ['pack', '--dry-run', '--json', '--ignore-scripts'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
  )
  packageDir = join(mkdtempSync(join(tmpdir(), 'df-pack-')), 'discovery-feedback')
  for (const { path } of files as { path: string }[]) {
    mkdirSync(dirname(join(packageDir, path)), { recursive: true })
    cpSync(path, join(packageDir, path))
  }
  symlinkSync(resolve('node_modules'), join(packageDir, 'node_modules'), 'dir')
  bin = join(packageDir, manifest.bin['discovery-feedback'])
})

const running: ChildProcess[] = []
afterAll(() => running.forEach((child) => child.kill('SIGKILL')))

/** Starts the bin; resolves with its printed output once it says it is ready, or once it exits. */
async function run(args: string[], env: Record<string, string> = {}) {
  const cwd = mkdtempSync(join(tmpdir(), 'df-inspect-'))
  const child = spawn(process.execPath, [bin, ...args], {
    cwd,
    env: { ...process.env, COLLECTOR_KEYS: '', COLLECTOR_KEYS_FILE: '', INSPECTOR_TOKEN: '', ...env }
  })
  running.push(child)
  let output = ''
  child.stdout.on('data', (data) => (output += data))
  child.stderr.on('data', (data) => (output += data))
  const exited = once(child, 'exit').then(([code]) => code as number)
  await Promise.race([exited, new Promise<void>((ready) => child.stdout.on('data', () => output.includes('Ctrl-C') && ready()))])
  return { child, cwd, output: () => output, exited }
}

const post = (url: string, key: string) =>
  fetch(url, {
    method: 'POST',
    body: JSON.stringify([
      { event: 'click-item', properties: { item_id: '1', variant_item_id: '1-1' }, key, t_client: Date.now(), user: { uid: 'u', sid: 's' } }
    ])
  }).then((response) => response.status)

describe('npx discovery-feedback inspect', () => {
  it('starts the collector and the inspector alone on loopback, prints their URLs, and stops on SIGTERM', async () => {
    const { child, cwd, output, exited } = await run(['inspect', '--port', '0', '--keys', 'shop-a,shop-b', '--token', 't0ken'])
    const inspector = /^Inspector: +(http:\/\/127\.0\.0\.1:\d+)\/inspector\?token=t0ken$/m.exec(output())
    expect(inspector, output()).not.toBeNull()
    const url = inspector![1]
    expect(output()).toContain(`Collector:  POST ${url}/v3/feedback\n`)
    expect(output()).toContain(`Events in:  ${join(cwd, 'discovery-feedback-events.ndjson')}\n`)
    expect(await post(url + '/v3/feedback', 'shop-b')).toBe(200)
    // Only the keys given: the demo's is not among them.
    expect(await post(url + '/v3/feedback', 'demo-key')).toBe(403)
    expect(readFileSync(join(cwd, 'discovery-feedback-events.ndjson'), 'utf8').split('\n').filter(Boolean)).toHaveLength(1)
    // No store, no discovery routes.
    expect((await fetch(url + '/')).status).toBe(404)
    expect((await fetch(url + '/v3/autocomplete', { method: 'POST', body: '{}' })).status).toBe(404)
    expect((await fetch(url + '/inspector')).status).toBe(401)
    const signIn = await fetch(url + '/inspector?token=t0ken', { redirect: 'manual' })
    expect(signIn.status).toBe(303)
    const page = await fetch(url + '/inspector', { headers: { cookie: signIn.headers.get('set-cookie')!.split(';')[0] } })
    expect(await page.text()).toContain('Click-through per rid source')
    child.kill('SIGTERM')
    expect(await exited).toBe(0)
    await expect(fetch(url + '/inspector')).rejects.toThrow()
  })

  it('takes its keys and token from the environment, with --host and a keys file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'df-keys-'))
    const keysFile = join(dir, 'keys')
    writeFileSync(keysFile, 'shop-c\n')
    const { child, output, exited } = await run(['inspect', '--port', '0', '--host', 'localhost', '--data-file', join(dir, 'events.ndjson')], {
      COLLECTOR_KEYS: 'shop-a',
      COLLECTOR_KEYS_FILE: keysFile,
      INSPECTOR_TOKEN: 'from-env'
    })
    const url = /^Inspector: +(http:\/\/localhost:\d+)\/inspector\?token=from-env$/m.exec(output())![1]
    expect(await post(url + '/v3/feedback', 'shop-a')).toBe(200)
    expect(await post(url + '/v3/feedback', 'shop-c')).toBe(200)
    expect(await post(url + '/v3/feedback', 'shop-d')).toBe(403)
    child.kill('SIGINT')
    expect(await exited).toBe(0)
  })

  it('refuses a wrong command or flag with its usage, before listening', async () => {
    for (const args of [['serve'], ['inspect', '--port', '80a'], ['inspect', '--verbose'], ['inspect', '--product-pattern', '(']]) {
      const { output, exited } = await run(args)
      expect(await exited, args.join(' ')).toBe(2)
      expect(output()).toContain('Usage: discovery-feedback inspect [options]')
    }
  })
})
