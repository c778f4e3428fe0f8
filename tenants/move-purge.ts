import { existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { assertTenantId } from '../schema/tenant-id.ts'
import type { Db } from './db.ts'
import { dropCapture } from './move-capture.ts'
import { withCheckpointer } from './move-checkpoint.ts'
import { dropFences } from './move-fence.ts'
import { removeStaging, stagingPath } from './move-staging.ts'
import {
  deleteOrder,
  keyList,
  keyOf,
  nextTurn,
  q,
  type TenantTable,
  tablesOf,
} from './move-tables.ts'
import { type Placement, placementFolder, type TenantRegistry } from './registry.ts'

/**
 * What a tenant move leaves to clear: the tenant's stale rows in the file it left (in slices, or
 * at once after a crash), the leftovers of an interrupted move, and erasure of a tenant's data.
 */

/** How long a purge deletes before it lets the event loop run (other tenants' requests). */
export const DELETE_SLICE_MS = 4

/**
 * Step 3 of `moveTenantData`: deletes the tenant's stale rows from a source in short write
 * transactions, while another thread checkpoints the file (tenants/move-checkpoint.ts).
 * Returns the rows deleted.
 */
export const deleteInSlices = (
  source: Db,
  tables: readonly TenantTable[],
  tenantId: string,
  sliceMs: number,
): Promise<number> =>
  withCheckpointer(source, () => deleteRowsInSlices(source, tables, tenantId, sliceMs))

/**
 * Deletes a tenant's rows in short write transactions with the event loop turning between them,
 * referencing tables first. Should the foreign keys not allow that order (a cycle), the rest goes
 * in one transaction with their checks deferred. Returns the rows deleted.
 */
export async function deleteRowsInSlices(
  source: Db,
  tables: readonly TenantTable[],
  tenantId: string,
  sliceMs: number,
): Promise<number> {
  let deleted = 0
  try {
    await nextTurn()
    for (const t of deleteOrder(source.sqlite, tables)) {
      const del = `DELETE FROM ${q(t.name)} WHERE ${keyOf(t)} IN (SELECT ${keyList(t)} FROM ${q(t.name)} WHERE tenant_id = ? LIMIT 128)`
      let more = true
      while (more) {
        source.write(() => {
          const start = performance.now()
          do {
            const n = source.sqlite.query(del).run(tenantId).changes
            deleted += n
            more = n > 0
          } while (more && performance.now() - start < sliceMs)
        })
        if (more) await nextTurn()
      }
    }
  } catch (err) {
    if (!/FOREIGN KEY/i.test((err as Error).message)) throw err
    deleted += deleteAllRows(source, tables, tenantId)
  }
  return deleted
}

/** A tenant's rows of every table in one write transaction, foreign keys checked at its end. */
function deleteAllRows(db: Db, tables: readonly TenantTable[], tenantId: string): number {
  let deleted = 0
  db.write(() => {
    db.sqlite.run('PRAGMA defer_foreign_keys = ON')
    for (const t of tables) {
      deleted += db.sqlite
        .query(`DELETE FROM ${q(t.name)} WHERE tenant_id = ?`)
        .run(tenantId).changes
    }
  })
  return deleted
}

/** The databases of `services` that exist under a placement, opened for the tenant. */
function* placedDatabases(
  registry: TenantRegistry,
  opts: { tenantId: string; placement: Placement; services: readonly string[] },
): Generator<Db> {
  const tenantId = assertTenantId(opts.tenantId)
  const dir = placementFolder(registry.dataDir, opts.placement, tenantId)
  for (const service of opts.services) {
    if (existsSync(join(dir, `${service}.db`)))
      yield registry.openAt(service, opts.placement, tenantId)
  }
}

/**
 * Clears what an interrupted move of a tenant left beside its rows: the capture triggers and log
 * in the old placement's databases and the staging files in the new placement's folder.
 */
export function settleMoveLeftovers(
  registry: TenantRegistry,
  opts: { tenantId: string; from: Placement; to: Placement; services: readonly string[] },
): void {
  const tenantId = assertTenantId(opts.tenantId)
  const fromDir = placementFolder(registry.dataDir, opts.from, tenantId)
  const toDir = placementFolder(registry.dataDir, opts.to, tenantId)
  for (const service of opts.services) {
    removeStaging(stagingPath(toDir, service, tenantId))
    if (!existsSync(join(fromDir, `${service}.db`))) continue
    const db = registry.openAt(service, opts.from, tenantId)
    db.write(() => {
      dropCapture(db, tenantId)
      dropFences(db, null)
    })
  }
}

/**
 * Deletes a tenant's rows from every service database under a placement (what a crash after the
 * placement switch leaves behind, or a Free tenant's data on erasure). Returns rows deleted.
 */
export function purgeTenantRows(
  registry: TenantRegistry,
  opts: { tenantId: string; placement: Placement; services: readonly string[] },
): number {
  let total = 0
  for (const db of placedDatabases(registry, opts)) {
    total += deleteAllRows(db, tablesOf(db.sqlite), opts.tenantId)
  }
  return total
}

/**
 * `purgeTenantRows` in short write transactions with the event loop turning between them (as a
 * move deletes what it left): for a process that keeps serving other tenants of the same files
 * meanwhile, where one transaction over a large tenant's rows would stall it. Returns rows deleted.
 */
export async function purgeTenantRowsInSlices(
  registry: TenantRegistry,
  opts: { tenantId: string; placement: Placement; services: readonly string[]; sliceMs?: number },
): Promise<number> {
  let total = 0
  for (const db of placedDatabases(registry, opts)) {
    const release = db.hold()
    try {
      const sliceMs = opts.sliceMs ?? DELETE_SLICE_MS
      total += await deleteInSlices(db, tablesOf(db.sqlite), opts.tenantId, sliceMs)
    } finally {
      release()
    }
  }
  return total
}

/** Closes and deletes a database file with its WAL and shared memory; returns the files gone. */
export function removeDatabaseFile(registry: TenantRegistry, path: string): number {
  registry.closePath?.(path)
  let files = 0
  for (const suffix of ['', '-wal', '-shm']) {
    if (existsSync(path + suffix)) {
      rmSync(path + suffix, { force: true })
      files++
    }
  }
  return files
}

/**
 * Erases a tenant's data everywhere: its rows in the shared databases, its own folder
 * (`tenants/<id>/`, placement and state files included) and, for a dedicated location, the
 * service database files in it (never anything else there).
 */
export function eraseTenantData(
  registry: TenantRegistry,
  opts: { tenantId: string; placement: Placement; services: readonly string[] },
): { rows: number; files: number } {
  const tenantId = assertTenantId(opts.tenantId)
  const rows = purgeTenantRows(registry, {
    tenantId,
    placement: { isolation: 'shared' },
    services: opts.services,
  })
  let files = 0
  const own = placementFolder(registry.dataDir, { isolation: 'schema' }, tenantId)
  const dedicated =
    opts.placement.isolation === 'database'
      ? placementFolder(registry.dataDir, opts.placement, tenantId)
      : null
  for (const service of opts.services) {
    files += removeDatabaseFile(registry, join(own, `${service}.db`))
    if (dedicated && dedicated !== own)
      files += removeDatabaseFile(registry, join(dedicated, `${service}.db`))
  }
  if (existsSync(own)) {
    rmSync(own, { recursive: true, force: true })
    files++
  }
  registry.evictPlacement?.(tenantId)
  return { rows, files }
}
