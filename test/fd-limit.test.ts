import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { connect } from 'node:net'
import { join } from 'node:path'
import { fileBudget } from '../daemon/fd-limit.ts'
import { api, eventually, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { signToken } from './support/tokens.ts'

const TENANTS = 300
const OPEN_FILES = 256
/** What daemon/fd-limit.ts leaves for database files under a 256 limit: 256 - 128. */
const DATABASE_FDS = fileBudget(256, OPEN_FILES).databases
const CONCURRENCY = 8

/** Set once the tests are over: no pool takes more work after that. */
let over = false

/** Runs `fn` over `items` with at most `n` in flight. */
async function pool<T>(items: T[], n: number, fn: (item: T) => Promise<void>) {
  let next = 0
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (!over && next < items.length) await fn(items[next++]!)
    }),
  )
}

/** The descriptors of one process, and how many are database files; null once it is gone. */
function countDescriptors(pid: number): { all: number; databases: number } | null {
  const dir = `/proc/${pid}/fd`
  let fds: string[]
  try {
    fds = readdirSync(dir)
  } catch {
    return null
  }
  let databases = 0
  for (const fd of fds) {
    try {
      if (/\.db(-wal|-shm)?$/.test(readlinkSync(join(dir, fd)))) databases++
    } catch {}
  }
  return { all: fds.length, databases }
}

/** The direct children of a process (the workers of a supervisor). */
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

for (const workers of ['1', '2'])
  describe(`open files under a small ulimit (${workers} worker${workers === '1' ? '' : 's'})`, () => {
    let p: TestPlatform
    let operator: string
    const ids = Array.from({ length: TENANTS }, (_, i) => `fd-${String(i).padStart(3, '0')}`)
    const tokens = new Map<string, string>()
    const samples: Array<{ all: number; databases: number }> = []
    let sampler: ReturnType<typeof setInterval> | undefined

    // Runs on a timer: it must never throw, or a test that timed out would keep failing every
    // 100 ms after its end (once 25,130 errors) and take the rest of the run down with it.
    // Every process of the platform is counted on its own (the supervisor and each worker): the
    // limit is per process.
    const sample = () => {
      const root = p?.pid()
      if (root === undefined) return
      for (const pid of [root, ...childrenOf(root)]) {
        const counted = countDescriptors(pid)
        if (counted) samples.push(counted)
      }
    }

    beforeAll(async () => {
      over = false
      // Two workers is what `mmp serve` runs by default on this two-core box.
      p = await startTestPlatform({ openFiles: OPEN_FILES, env: { MMP_WORKERS: workers } })
      operator = await p.login()
      await pool(ids, CONCURRENCY, async (id) => {
        const res = await api(p.gateway, operator).post('/api/v1/tenants', {
          id,
          name: `Tenant ${id}`,
          plan: Number(id.slice(3)) % 2 ? 'pro' : 'free',
          admin_email: `admin@${id}.test`,
        })
        if (res.status !== 201)
          throw new Error(`creating ${id}: ${res.status} ${JSON.stringify(res.body)}`)
      })
      // Tokens are signed with the platform's key rather than 300 logins (argon2 is slow on purpose).
      for (const id of ids) tokens.set(id, await signToken(p.dataDir, { tenantId: id }))
    }, 60_000)
    afterAll(async () => {
      over = true
      clearInterval(sampler)
      await p?.dispose()
    })

    it('answers every write and read for 300 tenants and keeps descriptors under the cap', async () => {
      const failures: string[] = []
      sampler = setInterval(sample, 100)
      sampler.unref()
      let n = 0
      const rounds = 2
      for (let round = 0; round < rounds && !over; round++) {
        await pool(ids, CONCURRENCY, async (id) => {
          const client = api(p.gateway, tokens.get(id))
          const write = await client.post('/api/v1/parser/transactions', {
            transactions: [
              {
                occurred_at: new Date(Date.UTC(2026, 0, 5, 10, round)).toISOString(),
                amount: 100 + round,
                direction: 'in',
                description: `Payment from customer ${round}`,
                receipt_number: `FD${id.slice(3)}R${round}X${n++}`.toUpperCase(),
              },
            ],
          })
          if (write.status !== 200 && write.status !== 201)
            failures.push(`${id} write: ${write.status} ${JSON.stringify(write.body)}`)
          const read = await client.get('/api/v1/analytics/summary')
          if (read.status !== 200)
            failures.push(`${id} read: ${read.status} ${JSON.stringify(read.body)}`)
        })
      }
      clearInterval(sampler)
      sample()
      expect(failures.slice(0, 5)).toEqual([])
      // The event consumers kept going: every tenant's writes reach analytics. Slowly: with 300
      // tenants through a cap of 34 databases, a busy box takes up to a minute to catch up.
      for (const id of [ids[0]!, ids[1]!, ids[TENANTS - 2]!, ids[TENANTS - 1]!]) {
        await eventually(
          async () => {
            const res = await api(p.gateway, tokens.get(id)).get('/api/v1/analytics/summary')
            return res.status === 200 && res.body.total_transactions === rounds
          },
          90_000,
          `analytics of ${id}`,
        )
      }
      const peak = {
        all: Math.max(...samples.map((s) => s.all)),
        databases: Math.max(...samples.map((s) => s.databases)),
      }
      console.log(`peak descriptors: ${peak.all} in all, ${peak.databases} on databases`)
      expect(peak.all).toBeLessThan(OPEN_FILES)
      // Every process keeps its database files (registry and its own connections) within the
      // share of the limit set aside for them.
      expect(peak.databases).toBeLessThanOrEqual(DATABASE_FDS)
      expect(p.logs()).not.toContain('EMFILE')
    }, 300_000)

    it('recovers by itself once clients that took every descriptor let go', async () => {
      // Idle connections take one descriptor each in the worker that accepted them: enough of
      // them leave none for a database or a JSON file.
      const sockets: Array<ReturnType<typeof connect>> = []
      const port = Number(new URL(p.gateway).port)
      for (let i = 0; i < OPEN_FILES * Number(workers) + 50; i++) {
        const s = connect(port, '127.0.0.1')
        s.on('error', () => {})
        sockets.push(s)
      }
      const statuses: number[] = []
      const during = ids.slice(100, 140)
      await pool(during, CONCURRENCY, async (id) => {
        const res = await fetch(`${p.gateway}/api/v1/analytics/summary`, {
          headers: { authorization: `Bearer ${tokens.get(id)}` },
          signal: AbortSignal.timeout(3000),
        }).catch(() => null)
        if (res) statuses.push(res.status)
        await res?.body?.cancel()
      })
      for (const s of sockets) s.destroy()
      // Never a 500 while it lasted: an answer is 200 or a 503 to retry.
      expect(statuses.filter((s) => s !== 200 && s !== 503)).toEqual([])
      for (const id of ids) {
        await eventually(
          async () =>
            (await api(p.gateway, tokens.get(id)).get('/api/v1/analytics/summary')).status === 200,
          20_000,
          `a read of ${id} after the clients let go`,
        )
      }
    }, 150_000)
  })
