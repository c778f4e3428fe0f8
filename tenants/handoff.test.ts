import { describe, expect, it } from 'bun:test'
import { readFileSync, rmSync } from 'node:fs'
import { packTenant, unpackTenant } from './handoff.ts'
import { fresh, registryOf, seed, stats } from './move-test-kit.ts'

describe('a tenant moving to another instance', () => {
  it("merges into the other instance's shared file, replacing what an earlier stay left and no other tenant's rows", async () => {
    const from = registryOf(fresh())
    seed(from.tenant('analytics', 'acme'), 'acme', 10_000)
    const before = stats(from.tenant('analytics', 'acme'), 'acme')
    const packed = await packTenant(from, { service: 'analytics', tenantId: 'acme' })
    expect(packed).not.toBeNull()
    const file = readFileSync(packed!.path)
    rmSync(packed!.path)

    const to = registryOf(fresh())
    const shared = to.tenant('analytics', 'other')
    seed(shared, 'other', 500)
    seed(shared, 'acme', 30, 'stale')
    const rows = await unpackTenant(to, { service: 'analytics', tenantId: 'acme', file })
    expect(rows).toBe(10_000 + 50 + 100)
    expect(stats(shared, 'acme')).toEqual(before)
    expect(shared.sqlite.query("SELECT 1 FROM test_rows WHERE id LIKE 'stale-%'").get()).toBeNull()
    expect(stats(shared, 'other').n).toBe(500)
    const children = shared.sqlite.query(
      "SELECT count(*) AS n, min(parent_id) AS first FROM test_children WHERE tenant_id = 'acme'",
    )
    expect(children.get()).toEqual({ n: 50, first: 'acme-0' })
  })
})
