// A real redis-server for the relay's tests (Debian's package, which .ci/run installs): each
// test file starts its own on a free loopback port, with no persistence, so that a restart
// forgets everything, as a Redis without RDB or AOF does in production.
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { connect, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createClient } from 'redis'
import { afterAll, beforeAll } from 'vitest'

export const REDIS_SERVER = '/usr/bin/redis-server'

/** A port nobody listens on now: the kernel's pick for a socket bound and closed at once. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

/** Whether something on the port answers PING with PONG, asked over a raw connection. */
export function ping(port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    let answer = ''
    const done = (up: boolean) => {
      socket.destroy()
      resolve(up)
    }
    socket.setTimeout(timeoutMs, () => done(false))
    socket.once('error', () => done(false))
    socket.once('connect', () => socket.write('PING\r\n'))
    socket.on('data', (chunk) => {
      answer += chunk.toString()
      if (answer.includes('\r\n')) done(answer.startsWith('+PONG'))
    })
  })
}

export interface RedisServer {
  port: number
  url: string
  /** The running process's id. */
  pid(): number | undefined
  /** Stops it with SIGTERM (or `signal`) and waits until it exited. Its data is gone: nothing persists. */
  stop(signal?: NodeJS.Signals): Promise<void>
  /** Starts it again on the same port and waits until it answers PING. */
  start(): Promise<void>
  /** Stops it for good and removes its working directory. */
  close(): Promise<void>
}

/**
 * Starts `redis-server --port N --save '' --appendonly no` bound to 127.0.0.1 on a free port and
 * resolves once it answers PING. Without Debian's redis-server the test fails with what to
 * install: a relay test that skips would prove nothing.
 */
export async function startRedis(): Promise<RedisServer> {
  if (!existsSync(REDIS_SERVER)) {
    throw new Error(
      `${REDIS_SERVER} is missing: install Debian's redis-server package (apt-get install redis-server; .ci/run does it) to run the relay's Redis tests`
    )
  }
  const port = await freePort()
  // Its own working directory, so that nothing it might write lands in the repository.
  const dir = mkdtempSync(join(tmpdir(), 'redis-'))
  let child: ChildProcess | undefined
  let exited: Promise<void> = Promise.resolve()

  const start = async () => {
    if (child) throw new Error('redis-server on port ' + port + ' is running already')
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no', '--loglevel', 'warning']
    const started = spawn(REDIS_SERVER, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    child = started
    let output = ''
    started.stdout!.on('data', (chunk) => (output += chunk))
    started.stderr!.on('data', (chunk) => (output += chunk))
    let exitCode: number | null | undefined
    exited = new Promise((resolve) =>
      started.once('exit', (code) => {
        exitCode = code
        if (child == started) child = undefined
        resolve()
      })
    )
    const end = Date.now() + 10000
    while (!(await ping(port))) {
      if (exitCode !== undefined) throw new Error(`redis-server on port ${port} exited with ${exitCode}: ${output.trim()}`)
      if (Date.now() > end) throw new Error(`redis-server on port ${port} did not answer PING within 10 s: ${output.trim()}`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }

  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (!child) return
    child.kill(signal)
    await exited
  }

  await start()
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    pid: () => child?.pid,
    stop,
    start,
    async close() {
      await stop()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

/**
 * A connected node-redis client of `redis`, as the relay's Redis tests use one: without an
 * offline queue, so that a command fails at once while the server is down rather than waiting
 * for it, and with its connection errors left to the commands that meet them.
 */
export async function connectClient(redis: RedisServer) {
  const client = createClient({ url: redis.url, disableOfflineQueue: true })
  client.on('error', () => {})
  await client.connect()
  return client
}

/**
 * For a test file whose relays share one redis-server: it starts before the file's tests, with
 * a connected client, and stops after them, closing first the HTTP servers the tests listed in
 * `servers`. Read `redis()` and `client()` inside the tests.
 */
export function redisForTestFile() {
  let redis: RedisServer | undefined
  let client: Awaited<ReturnType<typeof connectClient>> | undefined
  const servers: { close(): Promise<void> }[] = []
  beforeAll(async () => {
    redis = await startRedis()
    client = await connectClient(redis)
  })
  afterAll(async () => {
    for (const server of servers) await server.close()
    await client?.destroy()
    await redis?.close()
  })
  return { redis: () => redis!, client: () => client!, servers }
}
