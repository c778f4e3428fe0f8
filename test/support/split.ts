import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { basePorts } from '../../daemon/config.ts'
import { serviceNames } from '../../services/kernel/service-names.ts'
import { startMosquitto } from './mosquitto.ts'
import { pickOffset, startTestPlatform, type TestPlatform } from './platform.ts'

export interface SplitPlatform {
  broker: Awaited<ReturnType<typeof startMosquitto>>
  /** gateway, auth, tenant, parser, categorizer, analytics */
  front: TestPlatform
  /** payment, simulator, webhook, billing, cashflow */
  back: TestPlatform
  dispose(): Promise<void>
}

/**
 * DESIGN §12 on one machine: two `mmp serve --only …` processes sharing a data dir and Debian's
 * mosquitto as the external broker, the gateway in one finding services in the other.
 */
export async function startSplitPlatform(
  opts: { persistence?: boolean } = {},
): Promise<SplitPlatform> {
  // Both processes share one port range; another program may take one of its ports between the
  // check and the listen, so a clash starts over on a fresh range.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startSplitOnce(opts)
    } catch (err) {
      if (attempt >= 3 || !/EADDRINUSE|in use/.test(String(err))) throw err
    }
  }
}

async function startSplitOnce(opts: { persistence?: boolean }): Promise<SplitPlatform> {
  const broker = await startMosquitto(opts)
  const dataDir = mkdtempSync(join(tmpdir(), 'mmp-split-'))
  const offset = await pickOffset()
  const env = { MMP_MQTT_URL: broker.url }
  const started: TestPlatform[] = []
  try {
    const back = await startTestPlatform({
      env,
      offset,
      dataDir,
      only: 'payment,simulator,webhook,billing,cashflow',
    })
    started.push(back)
    const front = await startTestPlatform({
      env,
      offset,
      dataDir,
      only: 'gateway,auth,tenant,parser,categorizer,analytics',
    })
    return {
      broker,
      front,
      back,
      async dispose() {
        await front.kill()
        await back.kill()
        await broker.stop()
        rmSync(dataDir, { recursive: true, force: true })
      },
    }
  } catch (err) {
    for (const p of started) await p.kill().catch(() => {})
    await broker.stop()
    rmSync(dataDir, { recursive: true, force: true })
    throw err
  }
}

export interface PartitionedPlatform {
  broker: Awaited<ReturnType<typeof startMosquitto>>
  /** Every part but analytics, on one data dir. */
  main: TestPlatform
  /** Two `mmp serve --only analytics` instances, each on its own data dir. */
  analytics: [TestPlatform, TestPlatform]
  /** Their base URLs, in discovery order (the first is the home instance). */
  instances: [string, string]
  dispose(): Promise<void>
}

/**
 * DESIGN §12, tenants spread over instances: analytics runs as two `mmp serve --only analytics`
 * processes with their own data dirs, listed together in every process's discovery; everything
 * else runs in one more process on Debian's mosquitto. The instances know the signing key and the
 * hop key from their settings, as a part on another host would, not from the main data dir.
 * Each instance is its discovery entry by default (its own port), so no instance.<service> is set.
 */
export async function startPartitionedPlatform(): Promise<PartitionedPlatform> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startPartitionedOnce()
    } catch (err) {
      if (attempt >= 3 || !/EADDRINUSE|in use/.test(String(err))) throw err
    }
  }
}

async function startPartitionedOnce(): Promise<PartitionedPlatform> {
  const broker = await startMosquitto()
  const offset = await pickOffset()
  // The second instance's range is shifted by 100: only its analytics port is used, and it falls
  // between the ports of the test platforms' ranges (200 apart).
  const offsets = [offset, offset + 100] as const
  const instances = offsets.map((o) => `http://127.0.0.1:${basePorts.analytics + o}`) as [
    string,
    string,
  ]
  const discovery: Record<string, string> = {}
  for (const name of serviceNames)
    discovery[`MMP_DISCOVERY_${name.toUpperCase()}`] =
      name === 'analytics' ? instances.join(',') : `http://127.0.0.1:${basePorts[name] + offset}`
  const dirs = [0, 1, 2].map(() => mkdtempSync(join(tmpdir(), 'mmp-partition-')))
  const env = { MMP_MQTT_URL: broker.url, ...discovery }
  const started: TestPlatform[] = []
  try {
    const main = await startTestPlatform({
      env,
      offset,
      dataDir: dirs[0]!,
      only: 'gateway,auth,tenant,parser,categorizer,cashflow,payment,billing,webhook,simulator',
    })
    started.push(main)
    const secrets = JSON.parse(readFileSync(join(dirs[0]!, 'secrets.json'), 'utf8')) as {
      hop_key: string
    }
    const analytics: TestPlatform[] = []
    for (const i of [0, 1] as const) {
      // No key file: each instance asks auth's JWKS for the token key, as on a host of its own.
      const p = await startTestPlatform({
        env: { ...env, MMP_HOP_KEY: secrets.hop_key },
        offset: offsets[i],
        dataDir: dirs[i + 1]!,
        only: 'analytics',
      })
      started.push(p)
      analytics.push(p)
    }
    return {
      broker,
      main,
      analytics: analytics as [TestPlatform, TestPlatform],
      instances,
      async dispose() {
        for (const p of started) await p.kill()
        await broker.stop()
        for (const d of dirs) rmSync(d, { recursive: true, force: true })
      },
    }
  } catch (err) {
    for (const p of started) await p.kill().catch(() => {})
    await broker.stop()
    for (const d of dirs) rmSync(d, { recursive: true, force: true })
    throw err
  }
}
