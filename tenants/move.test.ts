import { describe, expect, it } from 'bun:test'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { migrations as base } from '../schema/tenant/migrations.ts'
import type { Db } from './db.ts'
import {
  eraseTenantData,
  moveTenantData,
  purgeTenantRows,
  purgeTenantRowsInSlices,
} from './move.ts'
import {
  fresh,
  hasThreadCpu,
  loopThreadCpuMs,
  registryOf,
  SERVICES,
  seed,
  stats,
} from './move-test-kit.ts'
import { createRegistry, type Placement } from './registry.ts'

describe('moving a tenant between isolation tiers', () => {
  it('moves 10,000 shared rows into the tenant folder with the same count and sum, leaving none behind', async () => {
    const dataDir = fresh()
    const r = registryOf(dataDir)
    const shared = r.tenant('analytics', 'acme')
    seed(shared, 'acme', 10_000)
    seed(shared, 'other', 500)
    shared.write(() => {
      shared.sqlite.run(
        "INSERT INTO outbox (id, topic, tenant_id, payload, created_at) VALUES ('evt_1', 't', 'acme', '{}', '2026-01-01')",
      )
      shared.sqlite.run(
        "INSERT INTO outbox (id, topic, tenant_id, payload, created_at, sent_at) VALUES ('evt_2', 't', 'acme', '{}', '2026-01-01', '2026-01-01')",
      )
      shared.sqlite.run(
        "INSERT INTO inbox (consumer, event_id, handled_at) VALUES ('c', 'evt_9', ?)",
        [new Date().toISOString()],
      )
    })
    const before = stats(shared, 'acme')
    const otherBefore = stats(shared, 'other')
    const to: Placement = { isolation: 'schema', plan: 'pro' }

    const report = await moveTenantData(r, {
      tenantId: 'acme',
      from: { isolation: 'shared' },
      to,
      services: SERVICES,
      switchPlacement: () => r.setPlacement('acme', to),
    })

    expect(report.moved.analytics).toEqual({
      outbox: 2,
      test_children: 50,
      test_days: 100,
      test_rows: 10_000,
    })
    expect(report.moved.payment).toBeUndefined()
    expect(r.placement('acme')).toEqual(to)
    const own = r.tenant('analytics', 'acme')
    expect(own.path).toBe(join(dataDir, 'tenants', 'acme', 'analytics.db'))
    expect(stats(own, 'acme')).toEqual(before)
    expect(stats(shared, 'acme')).toEqual({ n: 0, s: null })
    expect(stats(shared, 'other')).toEqual(otherBefore)
    expect(
      shared.sqlite.query("SELECT count(*) AS n FROM outbox WHERE tenant_id = 'acme'").get(),
    ).toEqual({ n: 0 })
    expect(
      own.sqlite.query('SELECT id, sent_at FROM outbox ORDER BY seq').all() as unknown[],
    ).toEqual([
      { id: 'evt_1', sent_at: null },
      { id: 'evt_2', sent_at: '2026-01-01' },
    ])
    expect(own.sqlite.query("SELECT 1 AS x FROM inbox WHERE event_id = 'evt_9'").get()).toEqual({
      x: 1,
    })
    expect(existsSync(join(dataDir, 'tenants', 'acme', 'payment.db'))).toBe(false)
  })

  it('moves the rows back on a downgrade so they stay reachable', async () => {
    const dataDir = fresh()
    const r = registryOf(dataDir)
    seed(r.tenant('analytics', 'acme'), 'other', 20)
    r.setPlacement('acme', { isolation: 'schema' })
    const own = r.tenant('analytics', 'acme')
    seed(own, 'acme', 300)
    const before = stats(own, 'acme')
    await moveTenantData(r, {
      tenantId: 'acme',
      from: { isolation: 'schema' },
      to: { isolation: 'shared' },
      services: SERVICES,
      switchPlacement: () => r.setPlacement('acme', { isolation: 'shared' }),
    })
    const shared = r.tenant('analytics', 'acme')
    expect(shared.path).toBe(join(dataDir, 'tenants', '_shared', 'analytics.db'))
    expect(stats(shared, 'acme')).toEqual(before)
    expect(stats(shared, 'other').n).toBe(20)
    expect(stats(own, 'acme').n).toBe(0)
  })

  it('refuses a write aimed at the file a tenant just left, and takes the tenant back later', async () => {
    const dataDir = fresh()
    const r = registryOf(dataDir)
    const shared = r.tenant('analytics', 'acme')
    seed(shared, 'acme', 100)
    seed(shared, 'other', 10)
    const up = { isolation: 'schema' } as const
    await moveTenantData(r, {
      tenantId: 'acme',
      from: { isolation: 'shared' },
      to: up,
      services: SERVICES,
      switchPlacement: () => r.setPlacement('acme', up),
    })
    // A request that had the shared handle in hand before the switch writes after it: refused
    // (answered 503, retried against the new placement), not acknowledged into the old file.
    const one = (tenantId: string, id: string) =>
      shared.write(() =>
        shared.sqlite.run('INSERT INTO test_rows (id, tenant_id, amount) VALUES (?, ?, 5)', [
          id,
          tenantId,
        ]),
      )
    const stale = () => one('acme', 'late-1')
    expect(stale).toThrow(/tenant acme has moved/)
    expect(stats(shared, 'acme').n).toBe(0)
    expect(stats(r.tenant('analytics', 'acme'), 'acme').n).toBe(100)
    // Other tenants of the file write as before.
    one('other', 'other-more')
    expect(stats(shared, 'other').n).toBe(11)
    // Back to Free: the fences in the shared file come down, the rows land there.
    await moveTenantData(r, {
      tenantId: 'acme',
      from: up,
      to: { isolation: 'shared' },
      services: SERVICES,
      switchPlacement: () => r.setPlacement('acme', { isolation: 'shared' }),
    })
    expect(stats(shared, 'acme').n).toBe(100)
    one('acme', 'back-1')
    expect(stats(shared, 'acme').n).toBe(101)
  })

  it('moves a Pro tenant to a dedicated Enterprise location', async () => {
    const dataDir = fresh()
    const r = registryOf(dataDir)
    r.setPlacement('acme', { isolation: 'schema' })
    seed(r.tenant('analytics', 'acme'), 'acme', 100)
    const to: Placement = { isolation: 'database', database_path: 'volumes/acme' }
    await moveTenantData(r, {
      tenantId: 'acme',
      from: { isolation: 'schema' },
      to,
      services: SERVICES,
      switchPlacement: () => r.setPlacement('acme', to),
    })
    const db = r.tenant('analytics', 'acme')
    expect(db.path).toBe(join(dataDir, 'volumes', 'acme', 'analytics.db'))
    expect(stats(db, 'acme').n).toBe(100)
  })

  it('keeps the old placement and every row when the copy fails before the switch', async () => {
    const dataDir = fresh()
    const r = registryOf(dataDir)
    seed(r.tenant('analytics', 'acme'), 'acme', 100)
    const broken = createRegistry({ dataDir, migrations: () => base })
    let switched = false
    await expect(
      moveTenantData(broken, {
        tenantId: 'acme',
        from: { isolation: 'shared' },
        to: { isolation: 'schema' },
        services: SERVICES,
        switchPlacement: () => {
          switched = true
        },
      }),
    ).rejects.toThrow(/does not exist/)
    expect(switched).toBe(false)
    broken.closeAll()
    expect(stats(r.tenant('analytics', 'acme'), 'acme').n).toBe(100)
    expect(r.placement('acme').isolation).toBe('shared')
  })

  it('purges rows a crash left behind after the switch', () => {
    const dataDir = fresh()
    const r = registryOf(dataDir)
    seed(r.tenant('analytics', 'acme'), 'acme', 10)
    seed(r.tenant('analytics', 'acme'), 'other', 10)
    const n = purgeTenantRows(r, {
      tenantId: 'acme',
      placement: { isolation: 'shared' },
      services: SERVICES,
    })
    expect(n).toBe(30)
    expect(stats(r.tenant('analytics', 'other'), 'other').n).toBe(10)
  })

  it("purges a large tenant's rows in short transactions, the event loop turning between them", async () => {
    const r = registryOf(fresh())
    const shared = r.tenant('analytics', 'acme')
    seed(shared, 'acme', 10_000)
    seed(shared, 'other', 10)
    let turns = 0
    let done = false
    const spin = () => {
      turns++
      if (!done) setImmediate(spin)
    }
    setImmediate(spin)
    const purged = purgeTenantRowsInSlices(r, {
      tenantId: 'acme',
      placement: { isolation: 'shared' },
      services: SERVICES,
      sliceMs: 1,
    })
    const before = turns
    const n = await purged
    done = true
    expect(n).toBe(10_000 + 50 + 100)
    expect(turns - before).toBeGreaterThan(2)
    expect(stats(shared, 'acme').n).toBe(0)
    expect(stats(r.tenant('analytics', 'other'), 'other').n).toBe(10)
  })

  it('erases a tenant: shared rows, own folder and dedicated files, nothing else', () => {
    const dataDir = fresh()
    const r = registryOf(dataDir)
    seed(r.tenant('analytics', 'acme'), 'acme', 10)
    seed(r.tenant('analytics', 'other'), 'other', 10)
    const p: Placement = { isolation: 'database', database_path: 'volumes/acme' }
    r.setPlacement('acme', p)
    seed(r.tenant('payment', 'acme'), 'acme', 5)
    const out = eraseTenantData(r, { tenantId: 'acme', placement: p, services: SERVICES })
    expect(out.rows).toBe(30)
    expect(existsSync(join(dataDir, 'tenants', 'acme'))).toBe(false)
    expect(existsSync(join(dataDir, 'volumes', 'acme', 'payment.db'))).toBe(false)
    expect(r.placement('acme').isolation).toBe('shared')
    expect(stats(r.tenant('analytics', 'other'), 'other').n).toBe(10)
  })
})

describe('a move running beside other tenants', () => {
  it("serves another tenant's reads and writes while the rows are copied, and loses none of the moving tenant's writes", async () => {
    const dataDir = fresh()
    const r = registryOf(dataDir)
    const shared = r.tenant('analytics', 'acme')
    seed(shared, 'acme', 40_000)
    seed(shared, 'other', 500)
    const to: Placement = { isolation: 'schema', plan: 'pro' }
    const before: { days: unknown[] } = { days: [] }
    let reads = 0
    let writes = 0
    let done = false
    const tick = setInterval(() => {
      if (done) return
      expect(stats(r.tenant('analytics', 'other'), 'other').n).toBe(500 + writes)
      reads++
      const other = r.tenant('analytics', 'other')
      other.write(() =>
        other.sqlite.run('INSERT INTO test_rows (id, tenant_id, amount) VALUES (?, ?, 1)', [
          `other-new-${writes}`,
          'other',
        ]),
      )
      writes++
      // The moving tenant keeps writing to its current placement: a new row, a changed one and a
      // deleted one, each of which must be found where the move puts the tenant.
      const acme = r.tenant('analytics', 'acme')
      acme.write(() => {
        acme.sqlite.run('INSERT INTO test_rows (id, tenant_id, amount) VALUES (?, ?, 3)', [
          `acme-new-${reads}`,
          'acme',
        ])
        acme.sqlite.run('UPDATE test_rows SET amount = amount + 1 WHERE id = ?', [`acme-${reads}`])
        acme.sqlite.run('DELETE FROM test_rows WHERE id = ?', [`acme-${39_999 - reads}`])
        // A table keyed by its primary key (WITHOUT ROWID): a changed, a new and a deleted row.
        acme.sqlite.run("UPDATE test_days SET total = -1 WHERE tenant_id = 'acme' AND day = ?", [
          reads % 50,
        ])
        acme.sqlite.run("INSERT INTO test_days (tenant_id, day, total) VALUES ('acme', ?, 7)", [
          1000 + reads,
        ])
        acme.sqlite.run("DELETE FROM test_days WHERE tenant_id = 'acme' AND day = ?", [
          50 + (reads % 50),
        ])
      })
    }, 1)
    const report = await moveTenantData(r, {
      tenantId: 'acme',
      from: { isolation: 'shared' },
      to,
      services: SERVICES,
      switchPlacement: () => {
        // Under the source's lock: what the tenant has now is what must arrive.
        before.days = shared.sqlite
          .query("SELECT day, total FROM test_days WHERE tenant_id = 'acme' ORDER BY day")
          .all()
        r.setPlacement('acme', to)
        done = true
      },
      sliceMs: 1,
    })
    done = true
    clearInterval(tick)
    expect(reads).toBeGreaterThan(0)
    const expected = stats(shared, 'acme')
    expect(expected.n).toBe(0)
    const own = r.tenant('analytics', 'acme')
    const n = own.sqlite.query("SELECT count(*) AS n FROM test_rows WHERE id LIKE 'acme-new-%'")
    expect(n.get()).toEqual({ n: reads })
    expect(stats(own, 'acme').n).toBe(40_000)
    const days = (db: Db) =>
      db.sqlite
        .query("SELECT day, total FROM test_days WHERE tenant_id = 'acme' ORDER BY day")
        .all()
    expect(days(own)).toEqual(before.days)
    expect(days(own)).toContainEqual({ day: 1001, total: 7 })
    expect(days(own)).toContainEqual({ day: 1, total: -1 })
    expect(days(own)).not.toContainEqual({ day: 51, total: 510 })
    expect(report.moved.analytics?.test_rows).toBe(40_000)
    // Most changes were redone before the final step; under the lock only the last few.
    expect(report.changed!.before).toBeGreaterThan(0)
    expect(report.changed!.final).toBeLessThan(report.changed!.before)
    expect(stats(shared, 'other').n).toBe(500 + writes)
  })

  it("keeps another tenant's writes made during a move that fails before the switch", async () => {
    const dataDir = fresh()
    const r = registryOf(dataDir)
    const shared = r.tenant('analytics', 'acme')
    seed(shared, 'acme', 20_000)
    let writes = 0
    const tick = setInterval(() => {
      shared.write(() =>
        shared.sqlite.run('INSERT INTO test_rows (id, tenant_id, amount) VALUES (?, ?, 1)', [
          `other-${writes}`,
          'other',
        ]),
      )
      writes++
    }, 1)
    await expect(
      moveTenantData(r, {
        tenantId: 'acme',
        from: { isolation: 'shared' },
        to: { isolation: 'schema' },
        services: SERVICES,
        switchPlacement: () => {
          throw new Error('no switch')
        },
        sliceMs: 1,
      }),
    ).rejects.toThrow(/no switch/)
    clearInterval(tick)
    expect(writes).toBeGreaterThan(0)
    expect(stats(shared, 'other').n).toBe(writes)
    expect(stats(shared, 'acme').n).toBe(20_000)
    expect(r.placement('acme').isolation).toBe('shared')
  })

  it.skipIf(!hasThreadCpu())(
    'copies the rows on a thread of its own: the event loop spends next to no CPU meanwhile',
    async () => {
      const r = registryOf(fresh())
      seed(r.tenant('analytics', 'acme'), 'acme', 60_000)
      const to: Placement = { isolation: 'schema' }
      const cpu: Partial<Record<string, number>> = {}
      const report = await moveTenantData(r, {
        tenantId: 'acme',
        from: { isolation: 'shared' },
        to,
        services: SERVICES,
        switchPlacement: () => r.setPlacement('acme', to),
        onStep: (step) => {
          cpu[step] = loopThreadCpuMs()
        },
      })
      expect(report.moved.analytics?.test_rows).toBe(60_000)
      // Copied on the event loop's thread, these rows took 150-300 ms of its CPU.
      expect((cpu.final ?? 0) - (cpu.copy ?? 0)).toBeLessThan(40)
    },
  )
})
