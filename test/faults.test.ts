import { Database } from 'bun:sqlite'
import { afterAll, describe, expect, it } from 'bun:test'
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { api, eventually, startTestPlatform, type TestPlatform } from './support/platform.ts'
import { createTenants } from './support/tenants.ts'
import { signToken } from './support/tokens.ts'

const PARTS = 'gateway,auth,tenant,parser,categorizer,analytics,broker'

const txn = (receipt: string, amount = 100) => ({
  transactions: [
    {
      occurred_at: '2026-01-05T10:00:00Z',
      amount,
      direction: 'in',
      description: `Payment from customer ${receipt}`,
      receipt_number: receipt,
    },
  ],
})

const alive = (p: TestPlatform) => {
  try {
    process.kill(p.pid()!, 0)
    return true
  } catch {
    return false
  }
}

/** Sends a remote-control command to a process started under `fiu-run -x`. */
async function fiuCtrl(pid: number, ...commands: string[]) {
  const proc = Bun.spawn(['fiu-ctrl', ...commands.flatMap((c) => ['-c', c]), String(pid)])
  expect(await proc.exited).toBe(0)
}

const hasFiu = Bun.spawnSync(['sh', '-c', 'command -v fiu-run && command -v fiu-ctrl']).success

describe.skipIf(!hasFiu)('random I/O faults (libfiu)', () => {
  it('keeps the process up and loses no acknowledged write; recovers when the faults stop', async () => {
    const p = await startTestPlatform({ only: PARTS, wrap: ['fiu-run', '-x'] })
    try {
      await createTenants(p.gateway, await p.login(), 'acme')
      const token = await signToken(p.dataDir, { tenantId: 'acme' })
      const client = api(p.gateway, token)
      const faults = [
        'enable_random name=posix/io/rw/*,probability=0.005',
        'enable_random name=posix/io/sync/*,probability=0.005',
      ]
      await fiuCtrl(p.pid()!, ...faults)
      const acked: string[] = []
      const statuses = new Map<string, number>()
      const end = Date.now() + 8_000
      for (let i = 0; Date.now() < end; i++) {
        const receipt = `FIU${String(i).padStart(5, '0')}`
        const res = await client.post('/api/v1/parser/transactions', txn(receipt)).catch(() => null)
        const key = res ? String(res.status) : 'no answer'
        statuses.set(key, (statuses.get(key) ?? 0) + 1)
        if (res?.status === 200 && res.body.accepted === 1) acked.push(receipt)
        await client.get('/api/v1/analytics/summary').catch(() => null)
      }
      await fiuCtrl(p.pid()!, 'disable name=posix/io/rw/*', 'disable name=posix/io/sync/*')
      console.log('answers under faults:', JSON.stringify(Object.fromEntries(statuses)))
      expect(alive(p)).toBe(true)
      expect(acked.length).toBeGreaterThan(10)
      // Whatever failed was a storage problem or a dropped connection, never a 500.
      expect(statuses.get('500') ?? 0).toBe(0)

      // Recovered without a restart: writes and reads answer again.
      const after = await eventually(async () => {
        const res = await client.post('/api/v1/parser/transactions', txn('FIUAFTER'))
        return res.status === 200 && res
      })
      expect(after.body.accepted + after.body.duplicates).toBe(1)
      expect((await client.get('/api/v1/analytics/summary')).status).toBe(200)

      const parser = new Database(join(p.dataDir, 'tenants', '_shared', 'parser.db'), {
        readonly: true,
      })
      const stored = new Set(
        parser
          .query<{ r: string }, []>(
            "SELECT receipt_number AS r FROM transactions WHERE tenant_id = 'acme'",
          )
          .all()
          .map((row) => row.r),
      )
      parser.close()
      expect(acked.filter((r) => !stored.has(r))).toEqual([])
      // And the events behind them reach analytics once the faults stop.
      await eventually(
        async () => {
          const s = await client.get('/api/v1/analytics/summary')
          return s.status === 200 && s.body.total_transactions >= acked.length + 1
        },
        30_000,
        'analytics to catch up',
      )
      expect(alive(p)).toBe(true)
    } finally {
      await p.dispose()
    }
  }, 90_000)
})

describe('a full disk', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mmp-full-'))
  const mounted = Bun.spawnSync(['mount', '-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', dir]).success
  afterAll(() => {
    Bun.spawnSync(['umount', '-l', dir])
    rmSync(dir, { recursive: true, force: true })
  })
  if (!mounted) console.warn(`skipping the disk-full test: cannot mount a tmpfs on ${dir}`)

  it.skipIf(!mounted)(
    'answers 507 STORAGE_FULL while the disk is full and recovers when space is freed',
    async () => {
      const p = await startTestPlatform({ only: PARTS, dataDir: join(dir, 'data') })
      try {
        await createTenants(p.gateway, await p.login(), 'acme')
        const token = await signToken(p.dataDir, { tenantId: 'acme' })
        const client = api(p.gateway, token)
        expect((await client.post('/api/v1/parser/transactions', txn('FULL0000'))).status).toBe(200)

        const filler = join(dir, 'filler')
        const fd = openSync(filler, 'w')
        const chunk = Buffer.alloc(64 * 1024, 1)
        try {
          for (;;) writeSync(fd, chunk)
        } catch (err) {
          expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC')
        } finally {
          closeSync(fd)
        }

        const seen = new Map<number, number>()
        let full: Awaited<ReturnType<typeof client.post>> | null = null
        for (let i = 1; i < 300 && !full; i++) {
          // Large batches: the WAL must grow past what it already holds for the disk to matter.
          const res = await client.post('/api/v1/parser/transactions', {
            transactions: Array.from({ length: 200 }, (_, j) => ({
              ...txn(`FULL${i}X${j}`).transactions[0],
              description: `Payment ${'x'.repeat(450)} ${i}-${j}`,
            })),
          })
          seen.set(res.status, (seen.get(res.status) ?? 0) + 1)
          if (res.status === 507) full = res
        }
        expect(full?.status).toBe(507)
        expect(full!.headers.get('content-type')).toBe('application/problem+json')
        expect(Number(full!.headers.get('retry-after'))).toBeGreaterThan(0)
        expect(full!.body).toMatchObject({ status: 507, code: 'STORAGE_FULL' })
        expect(seen.get(500) ?? 0).toBe(0)
        expect(alive(p)).toBe(true)

        rmSync(filler)
        const again = await eventually(async () => {
          const res = await client.post('/api/v1/parser/transactions', txn('FULLAFTER'))
          return res.status === 200 && res
        })
        expect(again.body.accepted).toBe(1)
        expect((await client.get('/api/v1/analytics/summary')).status).toBe(200)
        expect(alive(p)).toBe(true)
      } finally {
        await p.dispose()
      }
    },
    60_000,
  )
})
