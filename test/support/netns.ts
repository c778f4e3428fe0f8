import { spawnSync } from 'bun'

/** A private network on one machine: a bridge on the host and one network namespace per part. */
export interface Network {
  /** The host's address on the bridge (the broker and the test's own servers listen there). */
  hostIp: string
  /** A part's address, inside its own namespace. */
  ipOf(part: string): string
  /** The command prefix that runs a program inside a part's namespace. */
  wrap(part: string): string[]
  dispose(): void
}

const ip = (...args: string[]) => {
  const r = spawnSync(['ip', ...args], { stdout: 'pipe', stderr: 'pipe' })
  if (r.exitCode !== 0) throw new Error(`ip ${args.join(' ')}: ${r.stderr.toString().trim()}`)
}

/**
 * Whether this machine lets the tests make network namespaces (root, iproute2, a kernel that
 * allows it); the multi-host tests use separate ports on one loopback otherwise.
 */
export function namespacesAvailable(): boolean {
  if (process.getuid?.() !== 0) return false
  const probe = `mmp-probe-${process.pid}`
  try {
    ip('netns', 'add', probe)
    ip('netns', 'del', probe)
    return true
  } catch {
    return false
  }
}

/**
 * One network namespace per part, each with only its loopback and one veth on a bridge
 * (10.<a>.<b>.0/24, the host at .1). A part reaches another only by the address discovery names:
 * 127.0.0.1 in one namespace is not the loopback of another.
 *
 * @example
 * const net = createNetwork(['auth', 'gateway'])
 * spawn([...net.wrap('auth'), 'mmp', 'serve', '--only', 'auth'])
 */
export function createNetwork(parts: readonly string[]): Network {
  const tag = Math.random().toString(36).slice(2, 7)
  const subnet = `10.${100 + Math.floor(Math.random() * 100)}.${Math.floor(Math.random() * 250)}`
  const bridge = `mmpbr${tag}`
  const made: string[] = []
  const ips = new Map<string, string>()
  const nsOf = (part: string) => `mmp-${tag}-${part}`
  const dispose = () => {
    for (const ns of made) {
      try {
        ip('netns', 'del', ns)
      } catch {}
    }
    try {
      ip('link', 'del', bridge)
    } catch {}
  }
  try {
    ip('link', 'add', bridge, 'type', 'bridge')
    ip('addr', 'add', `${subnet}.1/24`, 'dev', bridge)
    ip('link', 'set', bridge, 'up')
    parts.forEach((part, i) => {
      const ns = nsOf(part)
      const host = `mv${tag}${i}`
      const peer = `mp${tag}${i}`
      const addr = `${subnet}.${10 + i}`
      ip('netns', 'add', ns)
      made.push(ns)
      ip('link', 'add', host, 'type', 'veth', 'peer', 'name', peer)
      ip('link', 'set', peer, 'netns', ns)
      ip('link', 'set', host, 'master', bridge)
      ip('link', 'set', host, 'up')
      ip('-n', ns, 'addr', 'add', `${addr}/24`, 'dev', peer)
      ip('-n', ns, 'link', 'set', peer, 'up')
      ip('-n', ns, 'link', 'set', 'lo', 'up')
      ips.set(part, addr)
    })
  } catch (err) {
    dispose()
    throw err
  }
  return {
    hostIp: `${subnet}.1`,
    ipOf(part) {
      const addr = ips.get(part)
      if (!addr) throw new Error(`${part} has no namespace`)
      return addr
    },
    wrap: (part) => ['ip', 'netns', 'exec', nsOf(part)],
    dispose,
  }
}
