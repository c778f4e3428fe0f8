import { describe, expect, it } from 'bun:test'
import type { Db } from './db.ts'
import { type MoveStep, moveTenantData } from './move.ts'
import {
  fresh,
  hasThreadCpu,
  loopThreadCpuMs,
  registryOf,
  SERVICES,
  seed,
  stats,
} from './move-test-kit.ts'
import type { Placement } from './registry.ts'

const OWN: Placement = { isolation: 'schema' }
const SHARED: Placement = { isolation: 'shared' }

/** Everything of a tenant in the test tables, in a stable order. */
const contents = (db: Db, tenantId: string) => ({
  rows: db.sqlite
    .query('SELECT id, amount, note FROM test_rows WHERE tenant_id = ? ORDER BY id')
    .all(tenantId),
  days: db.sqlite
    .query('SELECT day, total FROM test_days WHERE tenant_id = ? ORDER BY day')
    .all(tenantId),
  children: db.sqlite
    .query('SELECT parent_id FROM test_children WHERE tenant_id = ? ORDER BY parent_id')
    .all(tenantId),
})

/** acme in its own folder with `n` rows; other in the shared file with 500. */
function downgradeKit(n: number) {
  const r = registryOf(fresh())
  const shared = r.tenant('analytics', 'other')
  seed(shared, 'other', 500)
  r.setPlacement('acme', OWN)
  const own = r.tenant('analytics', 'acme')
  seed(own, 'acme', n)
  return { r, shared, own }
}

describe('a move into a file that exists (a downgrade into the shared file)', () => {
  it('clears the rows it merged when the move fails before the switch', async () => {
    const { r, shared, own } = downgradeKit(5_000)
    const steps: MoveStep[] = []
    await expect(
      moveTenantData(r, {
        tenantId: 'acme',
        from: OWN,
        to: SHARED,
        services: SERVICES,
        switchPlacement: () => {
          throw new Error('no switch')
        },
        onStep: (step) => steps.push(step),
      }),
    ).rejects.toThrow(/no switch/)
    expect(steps).toContain('merge')
    expect(contents(shared, 'acme')).toEqual({ rows: [], days: [], children: [] })
    expect(stats(shared, 'other').n).toBe(500)
    expect(stats(own, 'acme').n).toBe(5_000)
    expect(r.placement('acme')).toEqual(OWN)
  })

  it('merges the rows before the final step and redoes there what the tenant changed meanwhile', async () => {
    const { r, shared, own } = downgradeKit(20_000)
    // Left from an earlier stay in the shared file: stale, they must not come back.
    seed(shared, 'acme', 30, 'stale')
    let before: ReturnType<typeof contents> | null = null
    let writes = 0
    const steps: MoveStep[] = []
    const tick = setInterval(() => {
      if (before) return
      writes++
      own.write(() => {
        own.sqlite.run("INSERT INTO test_rows (id, tenant_id, amount) VALUES (?, 'acme', 3)", [
          `acme-new-${writes}`,
        ])
        own.sqlite.run("UPDATE test_rows SET amount = amount + 1, note = 'changed' WHERE id = ?", [
          `acme-${100 + writes}`,
        ])
        own.sqlite.run('DELETE FROM test_rows WHERE id = ?', [`acme-${19_999 - writes}`])
        own.sqlite.run("INSERT INTO test_children (parent_id, tenant_id) VALUES (?, 'acme')", [
          `acme-new-${writes}`,
        ])
        own.sqlite.run("UPDATE test_days SET total = -1 WHERE tenant_id = 'acme' AND day = ?", [
          writes % 50,
        ])
        own.sqlite.run("DELETE FROM test_days WHERE tenant_id = 'acme' AND day = ?", [
          50 + (writes % 50),
        ])
      })
    }, 1)
    const report = await moveTenantData(r, {
      tenantId: 'acme',
      from: OWN,
      to: SHARED,
      services: SERVICES,
      switchPlacement: () => {
        // Under the source's lock: what the tenant has now is what must arrive.
        before = contents(own, 'acme')
        r.setPlacement('acme', SHARED)
      },
      onStep: (step) => steps.push(step),
      sliceMs: 1,
    })
    clearInterval(tick)
    expect(steps).toContain('merge')
    expect(writes).toBeGreaterThan(0)
    expect(before).not.toBeNull()
    expect(contents(shared, 'acme')).toEqual(before!)
    expect(contents(shared, 'acme').rows).toContainEqual({
      id: `acme-new-${writes}`,
      amount: 3,
      note: null,
    })
    expect(stats(shared, 'other').n).toBe(500)
    expect(report.moved.analytics?.test_rows).toBe(before!.rows.length)
    expect(report.changed!.before).toBeGreaterThan(0)
    expect(report.changed!.final).toBeLessThan(report.changed!.before)
    expect(stats(own, 'acme').n).toBe(0)
  })

  it('leaves none of the merged rows when the tenant deleted them all while it moved', async () => {
    const { r, shared, own } = downgradeKit(2_000)
    const report = await moveTenantData(r, {
      tenantId: 'acme',
      from: OWN,
      to: SHARED,
      services: SERVICES,
      switchPlacement: () => r.setPlacement('acme', SHARED),
      onStep: (step) => {
        if (step !== 'final') return
        own.write(() => {
          for (const table of ['test_children', 'test_rows', 'test_days']) {
            own.sqlite.run(`DELETE FROM ${table} WHERE tenant_id = 'acme'`)
          }
        })
      },
    })
    expect(report.moved.analytics).toBeUndefined()
    expect(contents(shared, 'acme')).toEqual({ rows: [], days: [], children: [] })
    expect(r.placement('acme')).toEqual(SHARED)
  })

  it.skipIf(!hasThreadCpu())(
    'keeps the final step short: the event loop spends next to no CPU in it for 100k rows',
    async () => {
      const { r } = downgradeKit(100_000)
      const cpu: Partial<Record<MoveStep, number>> = {}
      const report = await moveTenantData(r, {
        tenantId: 'acme',
        from: OWN,
        to: SHARED,
        services: SERVICES,
        switchPlacement: () => r.setPlacement('acme', SHARED),
        onStep: (step) => {
          cpu[step] = loopThreadCpuMs()
        },
      })
      expect(report.moved.analytics?.test_rows).toBe(100_000)
      // Merged whole in the final step, these rows took 150-250 ms of its CPU.
      expect((cpu.purge ?? 0) - (cpu.final ?? 0)).toBeLessThan(50)
    },
  )
})
