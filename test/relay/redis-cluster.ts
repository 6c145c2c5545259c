// A real Redis Cluster for the relay's tests and the bench: six redis-server processes of Debian's
// package on free loopback ports, three masters and three replicas, joined by `redis-cli --cluster
// create … --cluster-replicas 1` as Redis's cluster tutorial does it. No persistence, as in
// redis-server.ts: a node killed and started again comes back empty and, its cluster config file
// kept, rejoins as a replica of whichever node took its slots.
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { freePort, ping, REDIS_SERVER } from './redis-server'

export const REDIS_CLI = '/usr/bin/redis-cli'
const run = promisify(execFile)

export interface ClusterNode {
  port: number
  url: string
  pid(): number | undefined
  /** Stops it with `signal` (SIGKILL: a crash) and waits until it exited. */
  stop(signal?: NodeJS.Signals): Promise<void>
  /** Starts it again with its cluster config file, and waits until it answers PING. */
  start(): Promise<void>
}

export interface RedisCluster {
  nodes: ClusterNode[]
  /** Every node's address, as node-redis's `createCluster({ rootNodes })` and ioredis's `new Cluster()` take them. */
  rootNodes: { url: string; host: string; port: number }[]
  /** One command to the node on `port` through redis-cli; its reply as redis-cli prints it. */
  command(port: number, ...args: string[]): Promise<string>
  /** The masters now, by port, with the slot ranges each serves, as a running node's CLUSTER NODES says. */
  masters(): Promise<{ port: number; slots: [number, number][] }[]>
  /** Resolves once every running node says cluster_state:ok and knows every other, and every replica's link to its master is up. */
  healthy(timeoutMs?: number): Promise<void>
  /** Stops every node and removes the working directory. */
  close(): Promise<void>
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** One cluster-enabled redis-server in `dir`, its bus on a port of its own (Redis 7's cluster-port). */
async function startNode(dir: string, nodeTimeoutMs: number): Promise<ClusterNode> {
  const port = await freePort()
  const busPort = await freePort()
  let child: ChildProcess | undefined
  let exited: Promise<void> = Promise.resolve()
  // prettier-ignore
  const args = [
    '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--daemonize', 'no', '--loglevel', 'warning',
    '--save', '', '--appendonly', 'no',
    '--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`, '--cluster-port', String(busPort),
    // How long a master may be silent before the others count it failed: Redis's default is 15 s.
    '--cluster-node-timeout', String(nodeTimeoutMs),
    // A replica's first sync at once, not after the default 5 s wait for other replicas.
    '--repl-diskless-sync-delay', '0'
  ]
  const start = async () => {
    if (child) throw new Error('the cluster node on port ' + port + ' is running already')
    const started = spawn(REDIS_SERVER, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    child = started
    let output = ''
    let exitCode: number | null | undefined
    started.stdout!.on('data', (chunk) => (output += chunk))
    started.stderr!.on('data', (chunk) => (output += chunk))
    exited = new Promise((resolve) =>
      started.once('exit', (code) => {
        exitCode = code
        if (child == started) child = undefined
        resolve()
      })
    )
    const end = Date.now() + 10000
    while (!(await ping(port))) {
      if (exitCode !== undefined) throw new Error(`cluster node on port ${port} exited with ${exitCode}: ${output.trim()}`)
      if (Date.now() > end) throw new Error(`cluster node on port ${port} did not answer PING within 10 s: ${output.trim()}`)
      await sleep(20)
    }
  }
  await start()
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    pid: () => child?.pid,
    async stop(signal = 'SIGTERM') {
      if (!child) return
      child.kill(signal)
      await exited
    },
    start
  }
}

/** The lines of CLUSTER NODES as masters with their slot ranges ("0-5460", or a single slot). */
function mastersOf(clusterNodes: string) {
  return clusterNodes
    .split('\n')
    .map((line) => line.trim().split(' '))
    .filter((fields) => fields.length >= 8 && fields[2].split(',').includes('master') && !fields[2].includes('fail'))
    .map((fields) => ({
      port: Number(/:(\d+)@/.exec(fields[1])![1]),
      slots: fields.slice(8).map((range) => range.split('-').map(Number) as [number, number])
    }))
    .filter((master) => master.slots.length)
    .map((master) => ({ ...master, slots: master.slots.map(([from, to = from]) => [from, to] as [number, number]) }))
}

/**
 * Starts six nodes and joins them into a cluster of three masters, each with a replica; resolves
 * once the cluster is healthy. `nodeTimeoutMs` is cluster-node-timeout: a crashed master's replica
 * takes over about a second after it. Without Debian's redis-server and redis-cli the test fails
 * with what to install.
 */
export async function startCluster({ nodeTimeoutMs = 1000 } = {}): Promise<RedisCluster> {
  for (const binary of [REDIS_SERVER, REDIS_CLI]) {
    if (!existsSync(binary)) throw new Error(`${binary} is missing: install Debian's redis-server package (apt-get install redis-server; .ci/run does it)`)
  }
  const dir = mkdtempSync(join(tmpdir(), 'redis-cluster-'))
  const nodes: ClusterNode[] = []
  const close = async () => {
    await Promise.all(nodes.map((node) => node.stop('SIGKILL')))
    rmSync(dir, { recursive: true, force: true })
  }
  const command = async (port: number, ...args: string[]) =>
    (await run(REDIS_CLI, ['-h', '127.0.0.1', '-p', String(port), ...args], { timeout: 5000 })).stdout.trim()
  const running = () => nodes.filter((node) => node.pid())

  async function healthy(timeoutMs = 20000) {
    const end = Date.now() + timeoutMs
    let last = ''
    for (;;) {
      const states = await Promise.all(
        running().map(async (node) => {
          const [info, replication] = await Promise.all([command(node.port, 'CLUSTER', 'INFO'), command(node.port, 'INFO', 'replication')]).catch(() => [
            '',
            ''
          ])
          const ok = info.includes('cluster_state:ok') && info.includes('cluster_known_nodes:' + nodes.length)
          const linked = replication.includes('role:master') || replication.includes('master_link_status:up')
          return ok && linked
            ? ''
            : `${node.port}: ${info.split('\n')[0] || 'no answer'}, ${/role:\w+/.exec(replication)?.[0]} ${/master_link_status:\w+/.exec(replication)?.[0] || ''}`
        })
      )
      last = states.filter(Boolean).join('; ')
      if (!last) return
      if (Date.now() > end) throw new Error('the cluster is not healthy after ' + timeoutMs + ' ms: ' + last)
      await sleep(50)
    }
  }

  try {
    for (let index = 0; index < 6; index++) nodes.push(await startNode(dir, nodeTimeoutMs))
    const addresses = nodes.map((node) => '127.0.0.1:' + node.port)
    await run(REDIS_CLI, ['--cluster', 'create', ...addresses, '--cluster-replicas', '1', '--cluster-yes'], { timeout: 30000 })
    await healthy()
  } catch (error) {
    await close()
    throw error
  }
  return {
    nodes,
    rootNodes: nodes.map((node) => ({ url: node.url, host: '127.0.0.1', port: node.port })),
    command,
    async masters() {
      const [node] = running()
      return mastersOf(await command(node.port, 'CLUSTER', 'NODES'))
    },
    healthy,
    close
  }
}
