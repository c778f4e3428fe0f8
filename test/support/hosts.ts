import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Subprocess, spawn } from 'bun'
import { basePorts } from '../../daemon/config.ts'
import { serviceNames } from '../../services/kernel/service-names.ts'
import { startMosquitto } from './mosquitto.ts'
import { createNetwork, namespacesAvailable } from './netns.ts'
import { pickOffset, startTestPlatform, type TestPlatform } from './platform.ts'

const FORWARDER = join(import.meta.dir, 'tcp-forward.ts')

/** Every part but auth, in the order they start: the simulator before payment looks for it. */
export const HOST_PARTS = [
  'tenant',
  'billing',
  'simulator',
  'payment',
  'parser',
  'categorizer',
  'analytics',
  'cashflow',
  'webhook',
  'gateway',
] as const

export interface Hosts {
  /** One `mmp serve --only <part>` process per part, auth first. */
  parts: Map<string, TestPlatform>
  broker: Awaited<ReturnType<typeof startMosquitto>>
  gateway: string
  /** The internal-hop key every part but auth gets from its environment. */
  hopKey: string
  /** Where the test's own servers (a webhook receiver) listen, for the parts to reach. */
  hostIp: string
  /**
   * The base URL at which the webhook part reaches a server of the test listening on `hostIp`:
   * plain-http webhooks may only go to a loopback address, so in its own namespace a forwarder
   * on its loopback carries them to the host.
   */
  webhookTo(port: number): Promise<string>
  /** Whether each part runs in its own network namespace (else on one loopback). */
  namespaces: boolean
  /** Replaces a part's host: the old process is killed and a new one starts on an empty dir. */
  replace(part: string): Promise<TestPlatform>
  dispose(): Promise<void>
}

/**
 * DESIGN §12, every part on its own host: auth and the ten other parts as eleven
 * `mmp serve --only` processes, each with its own data dir, on Debian's mosquitto with
 * persistence. They share nothing but the broker, the discovery and the hop key. Where the
 * machine allows it (root, iproute2) each runs in its own network namespace on a bridge, so a
 * part reaches another only at the address discovery gives it; otherwise each has its own ports
 * on one loopback.
 *
 * @example
 * const hosts = await startHosts()
 * const operator = await hosts.parts.get('gateway')!.login()
 */
export async function startHosts(): Promise<Hosts> {
  const all = ['auth', ...HOST_PARTS]
  const net = namespacesAvailable() ? createNetwork(all) : null
  const forwarders: Subprocess[] = []
  const parts = new Map<string, TestPlatform>()
  const dirs: string[] = []
  const hostIp = net?.hostIp ?? '127.0.0.1'
  const broker = await startMosquitto({ persistence: true, host: hostIp }).catch((err) => {
    net?.dispose()
    throw err
  })
  const offset = await pickOffset()
  const ipOf = (part: string) => net?.ipOf(part) ?? '127.0.0.1'
  const at = (part: keyof typeof basePorts) => `http://${ipOf(part)}:${basePorts[part] + offset}`
  /** What a part on a host of its own is told of the others. */
  const network: Record<string, string> = net
    ? {
        ...Object.fromEntries(serviceNames.map((s) => [`MMP_DISCOVERY_${s.toUpperCase()}`, at(s)])),
        MMP_SIMULATOR_URL: at('simulator'),
        MMP_CALLBACK_BASE_URL: at('gateway'),
      }
    : {}
  let hopKey = ''
  const start = async (only: string) => {
    const dataDir = mkdtempSync(join(tmpdir(), `mmp-host-${only}-`))
    dirs.push(dataDir)
    const env: Record<string, string> = { MMP_MQTT_URL: broker.url, ...network }
    if (net) {
      env.MMP_HOST = ipOf(only)
      env.MMP_GATEWAY_HOST = ipOf(only)
    }
    if (hopKey) env.MMP_HOP_KEY = hopKey
    const p = await startTestPlatform({
      only,
      offset,
      dataDir,
      env,
      ...(net ? { host: ipOf(only), wrap: net.wrap(only) } : {}),
    })
    parts.set(only, p)
    return p
  }
  try {
    const auth = await start('auth')
    hopKey = (
      JSON.parse(readFileSync(join(auth.dataDir, 'secrets.json'), 'utf8')) as { hop_key: string }
    ).hop_key
    for (const only of HOST_PARTS) await start(only)
  } catch (err) {
    for (const p of parts.values()) await p.kill().catch(() => {})
    await broker.stop()
    net?.dispose()
    for (const d of dirs) rmSync(d, { recursive: true, force: true })
    throw err
  }
  return {
    parts,
    broker,
    gateway: parts.get('gateway')!.gateway,
    hopKey,
    hostIp,
    namespaces: net !== null,
    async webhookTo(port) {
      if (!net) return `http://127.0.0.1:${port}`
      const forwarder = spawn(
        [...net.wrap('webhook'), process.execPath, FORWARDER, net.hostIp, String(port)],
        { stdout: 'pipe', stderr: 'inherit' },
      )
      forwarders.push(forwarder)
      const reader = (forwarder.stdout as ReadableStream<Uint8Array>).getReader()
      const first = new TextDecoder().decode((await reader.read()).value)
      reader.releaseLock()
      return `http://127.0.0.1:${Number(first.trim())}`
    },
    async replace(part) {
      await parts.get(part)?.kill()
      return await start(part)
    },
    async dispose() {
      for (const f of forwarders) f.kill()
      for (const p of parts.values()) await p.kill().catch(() => {})
      await broker.stop()
      net?.dispose()
      for (const d of dirs) rmSync(d, { recursive: true, force: true })
    },
  }
}
