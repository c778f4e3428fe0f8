import { afterEach } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Migration } from '../schema/kernel.ts'
import { migrations as base } from '../schema/tenant/migrations.ts'
import type { Db } from './db.ts'
import { createRegistry, type TenantRegistry } from './registry.ts'

/**
 * What the tenant move tests share: a schema with a table keyed by text, one keyed by an integer
 * that references it, one `WITHOUT ROWID` and one with no tenant; folders cleared after each test.
 */
const testTable: Migration = {
  tag: '9000_test_rows',
  sql: `CREATE TABLE test_rows (id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, amount INTEGER NOT NULL, note TEXT);
--> statement-breakpoint
CREATE TABLE test_children (id INTEGER PRIMARY KEY, parent_id TEXT NOT NULL REFERENCES test_rows(id), tenant_id TEXT NOT NULL);
--> statement-breakpoint
CREATE TABLE test_days (tenant_id TEXT NOT NULL, day INTEGER NOT NULL, total INTEGER NOT NULL, PRIMARY KEY (tenant_id, day)) WITHOUT ROWID
--> statement-breakpoint
CREATE TABLE test_global (k TEXT PRIMARY KEY, v TEXT)`,
}
export const migrations = [...base, testTable]

const dirs: string[] = []
const registries: TenantRegistry[] = []
export const fresh = () => {
  const d = mkdtempSync(join(tmpdir(), 'mmp-move-'))
  dirs.push(d)
  return d
}
// Closed here, not by the collector during a later test (a close checkpoints the file).
afterEach(() => {
  for (const r of registries.splice(0)) r.closeAll()
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

export const SERVICES = ['analytics', 'payment']

export function seed(db: Db, tenantId: string, n: number, prefix = tenantId) {
  db.write(() => {
    const ins = db.sqlite.prepare(
      'INSERT INTO test_rows (id, tenant_id, amount, note) VALUES (?, ?, ?, ?)',
    )
    for (let i = 0; i < n; i++) ins.run(`${prefix}-${i}`, tenantId, (i % 997) * 100 + 5, `row ${i}`)
    const child = db.sqlite.prepare(
      'INSERT INTO test_children (parent_id, tenant_id) VALUES (?, ?)',
    )
    for (let i = 0; i < Math.min(n, 50); i++) child.run(`${prefix}-${i}`, tenantId)
    const day = db.sqlite.prepare('INSERT INTO test_days (tenant_id, day, total) VALUES (?, ?, ?)')
    for (let i = 0; i < Math.min(n, 100); i++) day.run(tenantId, i, i * 10)
    db.sqlite.run("INSERT OR IGNORE INTO test_global (k, v) VALUES ('x', 'y')")
  })
}

export const stats = (db: Db, tenantId: string) =>
  db.sqlite
    .query<{ n: number; s: number | null }, [string]>(
      'SELECT count(*) AS n, sum(amount) AS s FROM test_rows WHERE tenant_id = ?',
    )
    .get(tenantId)!

/** CPU time of the thread that runs the event loop (Linux), in ms at the clock tick's 10 ms. */
export function loopThreadCpuMs(): number {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}

/** Whether `loopThreadCpuMs` can be read here. */
export const hasThreadCpu = () => {
  try {
    loopThreadCpuMs()
    return true
  } catch {
    return false
  }
}

/** A registry where the test's tenants exist, as the tenant service would have created them. */
export function registryOf(dataDir: string) {
  const r = createRegistry({ dataDir, migrations: () => migrations })
  registries.push(r)
  for (const id of ['acme', 'other']) r.setPlacement(id, { isolation: 'shared' })
  return r
}
