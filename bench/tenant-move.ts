/**
 * Moving a Free tenant's rows to its own folder (tenants/move.ts) against the floor it cannot beat:
 * a plain bun:sqlite copy of the same rows between two files in one transaction.
 * Usage: bun bench/tenant-move.ts [rows]
 */
import { Database } from 'bun:sqlite'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Migration } from '../schema/kernel.ts'
import { migrations as base } from '../schema/tenant/migrations.ts'
import { moveTenantData } from '../tenants/move.ts'
import { createRegistry } from '../tenants/registry.ts'

const rows = Number(process.argv[2] ?? 200_000)
const table: Migration = {
  tag: '9000_bench',
  sql: `CREATE TABLE txns (id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, occurred_at TEXT NOT NULL, amount INTEGER NOT NULL, description TEXT);
--> statement-breakpoint
CREATE INDEX txns_tenant ON txns (tenant_id, occurred_at)`,
}
const dir = mkdtempSync(join(tmpdir(), 'mmp-bench-move-'))
try {
  const registry = createRegistry({ dataDir: dir, migrations: () => [...base, table] })
  const shared = registry.tenant('analytics', 'acme')
  shared.write(() => {
    const ins = shared.sqlite.prepare('INSERT INTO txns VALUES (?, ?, ?, ?, ?)')
    for (let i = 0; i < rows; i++) {
      ins.run(`txn_${i}`, i % 4 === 0 ? 'other' : 'acme', '2026-11-01T00:00:00Z', i, 'PAYMENT')
    }
  })
  const tenantRows = rows - Math.ceil(rows / 4)

  const ref = new Database(join(dir, 'ref.db'))
  ref.run('PRAGMA journal_mode = WAL')
  for (const stmt of table.sql.split('--> statement-breakpoint')) ref.run(stmt)
  let t0 = performance.now()
  ref
    .transaction(() => {
      const ins = ref.prepare('INSERT INTO txns VALUES (?, ?, ?, ?, ?)')
      const sel = shared.sqlite.prepare<Record<string, unknown>, [string]>(
        'SELECT id, tenant_id, occurred_at, amount, description FROM txns WHERE tenant_id = ?',
      )
      for (const r of sel.iterate('acme'))
        ins.run(
          r.id as string,
          r.tenant_id as string,
          r.occurred_at as string,
          r.amount as number,
          r.description as string,
        )
    })
    .immediate()
  const refMs = performance.now() - t0

  t0 = performance.now()
  const report = moveTenantData(registry, {
    tenantId: 'acme',
    from: { isolation: 'shared' },
    to: { isolation: 'schema' },
    services: ['analytics'],
    switchPlacement: () => registry.setPlacement('acme', { isolation: 'schema' }),
  })
  const moveMs = performance.now() - t0
  if (report.moved.analytics?.txns !== tenantRows) throw new Error('row count mismatch')
  const rate = (ms: number) => Math.round(tenantRows / (ms / 1000))
  console.log(
    `tenant move: ${tenantRows} rows in ${moveMs.toFixed(0)} ms (${rate(moveMs)} rows/s, event loop blocked meanwhile)`,
  )
  console.log(`reference plain copy: ${refMs.toFixed(0)} ms (${rate(refMs)} rows/s)`)
  console.log(`ratio move/reference time: ${(moveMs / refMs).toFixed(2)}x`)
  ref.close()
  registry.closeAll()
} finally {
  rmSync(dir, { recursive: true, force: true })
}
