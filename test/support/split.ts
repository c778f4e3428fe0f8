import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
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
export async function startSplitPlatform(): Promise<SplitPlatform> {
  // Both processes share one port range; another program may take one of its ports between the
  // check and the listen, so a clash starts over on a fresh range.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startSplitOnce()
    } catch (err) {
      if (attempt >= 3 || !/EADDRINUSE|in use/.test(String(err))) throw err
    }
  }
}

async function startSplitOnce(): Promise<SplitPlatform> {
  const broker = await startMosquitto()
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
