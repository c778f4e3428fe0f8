import { afterEach, describe, expect, it } from 'bun:test'
import { startTestPlatform, type TestPlatform } from './support/platform.ts'

/**
 * `/health` means the whole process serves (DESIGN §15): under the default `mmp serve` with two
 * workers the gateway once said 200 while the M-Pesa simulator was still 1.4 s from listening.
 */
describe('ready means ready', () => {
  let p: TestPlatform | undefined
  afterEach(async () => {
    await p?.dispose()
    p = undefined
  })

  /** Polls the gateway's /health until 200; every 503 body on the way, in order. */
  const untilHealthy = async (platform: TestPlatform) => {
    const starting: Array<{ status: string; checks: Record<string, { status: string }> }> = []
    const end = Date.now() + 45_000
    for (;;) {
      const res = await fetch(`${platform.gateway}/health`).catch(() => null)
      if (res?.status === 200) return starting
      if (res?.status === 503) starting.push(await res.json())
      else await res?.body?.cancel()
      if (Date.now() > end) throw new Error(`the gateway never said 200:\n${platform.logs()}`)
      await Bun.sleep(20)
    }
  }
  /** One request to the simulator, no retry: it must be listening already. */
  const simulatorAnswers = async (platform: TestPlatform) =>
    (await fetch(`${platform.url('simulator')}/health`)).status

  for (const workers of ['2', '1']) {
    it(`with ${workers} worker(s), the simulator answers the moment the gateway's /health says 200`, async () => {
      p = await startTestPlatform({ env: { MMP_WORKERS: workers }, noWait: true })
      const starting = await untilHealthy(p)
      expect(await simulatorAnswers(p)).toBe(200)
      expect(p.logs()).toContain('mmp is up')
      for (const body of starting) {
        expect(body.status).toBe('starting')
        expect(Object.keys(body.checks).length).toBeGreaterThan(0)
      }
      if (workers === '2') {
        // The gateway of the first worker listens while the second starts and before the
        // supervisor starts the simulator: the 503s said what was missing.
        expect(starting.length).toBeGreaterThan(0)
        expect(Object.keys(starting.at(-1)!.checks)).toEqual(expect.arrayContaining(['simulator']))
      }
    })
  }

  it('prints "mmp is up" only once the simulator listens', async () => {
    p = await startTestPlatform({ env: { MMP_WORKERS: '2' }, noWait: true })
    const platform = p
    const end = Date.now() + 45_000
    while (!platform.logs().includes('mmp is up')) {
      if (Date.now() > end) throw new Error(`no "mmp is up" line:\n${platform.logs()}`)
      await Bun.sleep(20)
    }
    expect(await simulatorAnswers(platform)).toBe(200)
  })
})
