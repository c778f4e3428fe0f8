import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startMosquitto } from './mosquitto.ts'
import { pickOffset, startTestPlatform, type TestPlatform } from './platform.ts'

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
  /** Replaces a part's host: the old process is killed and a new one starts on an empty dir. */
  replace(part: string): Promise<TestPlatform>
  dispose(): Promise<void>
}

/**
 * DESIGN §12, every part on its own host: auth and the ten other parts as eleven
 * `mmp serve --only` processes, each with its own data dir, on Debian's mosquitto with
 * persistence. They share nothing but the broker, the discovery (ports) and the hop key.
 *
 * @example
 * const hosts = await startHosts()
 * const operator = await hosts.parts.get('gateway')!.login()
 */
export async function startHosts(): Promise<Hosts> {
  const parts = new Map<string, TestPlatform>()
  const dirs: string[] = []
  const broker = await startMosquitto({ persistence: true })
  const offset = await pickOffset()
  let hopKey = ''
  const start = async (only: string) => {
    const dataDir = mkdtempSync(join(tmpdir(), `mmp-host-${only}-`))
    dirs.push(dataDir)
    const env: Record<string, string> = { MMP_MQTT_URL: broker.url }
    if (hopKey) env.MMP_HOP_KEY = hopKey
    const p = await startTestPlatform({ only, offset, dataDir, env })
    parts.set(only, p)
    return p
  }
  const auth = await start('auth')
  hopKey = (
    JSON.parse(readFileSync(join(auth.dataDir, 'secrets.json'), 'utf8')) as { hop_key: string }
  ).hop_key
  for (const only of HOST_PARTS) await start(only)
  return {
    parts,
    broker,
    gateway: parts.get('gateway')!.gateway,
    hopKey,
    async replace(part) {
      await parts.get(part)?.kill()
      return await start(part)
    },
    async dispose() {
      for (const p of parts.values()) await p.kill().catch(() => {})
      await broker.stop()
      for (const d of dirs) rmSync(d, { recursive: true, force: true })
    },
  }
}
