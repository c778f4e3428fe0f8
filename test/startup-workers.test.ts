import { afterEach, describe, expect, it } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { startTestPlatform, type TestPlatform } from './support/platform.ts'

/** The live direct children of a process (the workers of a supervisor). */
function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((t) =>
      readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8')
        .split(/\s+/)
        .filter(Boolean)
        .map(Number),
    )
  } catch {
    return []
  }
}

interface Health {
  status: string
  warming?: Record<string, string>
}

/** One `/health` on a new connection, so the kernel may hand it to either worker. */
async function health(url: string): Promise<{ status: number; body: Health }> {
  const res = await fetch(`${url}/health`, { headers: { connection: 'close' } })
  return { status: res.status, body: (await res.json()) as Health }
}

/**
 * `mmp serve` with two workers serves once the first worker and the simulator do (workers started
 * together on a two-core box each took as long as both); the second joins as soon as it can
 * answer in full, and meanwhile `/health` says it is still starting.
 */
describe('start-up with workers', () => {
  let p: TestPlatform | undefined
  afterEach(async () => {
    await p?.dispose()
    p = undefined
  })

  it('serves with the first worker, and the second joins without one 503', async () => {
    p = await startTestPlatform({ env: { MMP_WORKERS: '2' }, noWait: true })
    const end = Date.now() + 45_000
    let first: Health | null = null
    while (!first) {
      const res = await fetch(`${p.gateway}/health`).catch(() => null)
      if (res?.status === 200) first = (await res.json()) as Health
      else await res?.body?.cancel()
      if (Date.now() > end) throw new Error(`the gateway never said 200:\n${p.logs()}`)
      await Bun.sleep(10)
    }
    // The supervisor starts the second worker only once the platform serves.
    expect(first.warming?.workers).toBe('1 more worker starting')
    // From now on every answer of either worker, on the gateway and on a service, is a 200.
    const statuses: number[] = []
    for (;;) {
      const [gateway, payment] = await Promise.all([health(p.gateway), health(p.url('payment'))])
      statuses.push(gateway.status, payment.status)
      if (!gateway.body.warming?.workers && !payment.body.warming?.workers) break
      if (Date.now() > end) throw new Error(`the second worker never joined:\n${p.logs()}`)
      await Bun.sleep(10)
    }
    expect(statuses.filter((s) => s !== 200)).toEqual([])
    expect(childrenOf(p.pid()!)).toHaveLength(2)
  }, 60_000)
})
