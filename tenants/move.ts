import { Database } from 'bun:sqlite'
import { existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { assertTenantId } from '../schema/tenant-id.ts'
import type { Db } from './db.ts'
import { dropCapture, readCapture, startCapture } from './move-capture.ts'
import { startCheckpointer } from './move-checkpoint.ts'
import {
  applyCaptured,
  checkCounts,
  copyRows,
  mergeStaging,
  openStaging,
  placeStaging,
  removeStaging,
  stagingPath,
  syncFileAsync,
} from './move-copy.ts'
import { dropFences, fenceTenant } from './move-fence.ts'
import {
  countOf,
  deleteOrder,
  hasOutbox,
  hasRows,
  keyList,
  keyOf,
  MoveError,
  q,
  type TenantTable,
  tablesOf,
} from './move-tables.ts'
import { type Placement, placementFolder, type TenantRegistry } from './registry.ts'

export { MoveError, type TenantTable }

/** Consumer inbox records younger than this travel with the tenant, so redeliveries stay no-ops. */
export const INBOX_WINDOW_MS = 7 * 86_400_000
/** How long a move works before it lets the event loop run (other tenants' requests). */
const SLICE_MS = 4

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

/** Every table of a database that holds tenant rows (see `tablesOf`). */
export const tenantTables = (db: Db): TenantTable[] => tablesOf(db.sqlite)

/** How many rows a tenant has in each tenant table of a database. */
export function countTenantRows(db: Db, tenantId: string): Record<string, number> {
  const out: Record<string, number> = {}
  for (const t of tenantTables(db)) out[t.name] = countOf(db.sqlite, t.name, tenantId)
  return out
}

export interface MoveReport {
  /** Rows moved per service and table. */
  moved: Record<string, Record<string, number>>
  total: number
}

/** One service's share of a move. */
interface Part {
  service: string
  source: Db
  tables: TenantTable[]
  release: () => void
  stagingPath: string
  targetPath: string
  /** The capture triggers are in the source and not yet dropped. */
  capturing: boolean
  /** Built while the event loop kept running; null until then, or when the tenant had no rows. */
  staging: Database | null
  /** Rows of the tenant in the staging copy, per table. */
  counts: Record<string, number>
  moved: Record<string, number> | null
}

/**
 * Moves one tenant's rows between two placements (Free→Pro, Pro→Enterprise, downgrades), for
 * every service whose database exists under the old placement, while other tenants of the same
 * files keep being served: the copy never holds a write lock across a turn of the event loop.
 *
 * 1. For each source with rows of the tenant, triggers start logging the rowids of the tenant's
 *    rows written from now on (tenants/move-capture.ts); a connection of the move's own then
 *    reads a snapshot and copies it into a staging file beside the target (tenants/move-copy.ts),
 *    in slices of a few milliseconds with the event loop running in between. Other tenants
 *    write as usual; the moving tenant's writes still go to the old placement and are logged.
 * 2. The final step, synchronous: every source is locked (`BEGIN IMMEDIATE`, nested), the logged
 *    rows are copied again into the staging files (the snapshot's copy was counted against the
 *    snapshot; the logged rows are applied by rowid and counted as they go), the triggers dropped, the staging files synced and put in place (renamed in when the
 *    target file does not exist, merged into it otherwise), `switchPlacement` makes the new
 *    placement current, the tenant's unsent outbox rows leave the source (so only the target's
 *    relay publishes them) and the locks are released. It costs the logged rows, not the moved
 *    ones, unless a merge is needed.
 * 3. The tenant's rows, stale now, are deleted from the sources in slices.
 *
 * A failure before the switch leaves the old placement authoritative (the target copies are
 * cleared on the next attempt, capture triggers and staging files removed); a crash after it
 * leaves stale source rows that `purgeTenantRows` removes, and `settleMoveLeftovers` clears what a
 * crash left of the capture. Outbox rows move with their sent state; recent inbox records are
 * copied so redelivered events stay no-ops.
 *
 * @example
 * await moveTenantData(registry, { tenantId, from, to, services, switchPlacement: () => registry.setPlacement(tenantId, to) })
 */
export async function moveTenantData(
  registry: TenantRegistry,
  opts: {
    tenantId: string
    from: Placement
    to: Placement
    services: readonly string[]
    switchPlacement: () => void
    /** Called when every copy is in place and the old placement is still current (crash tests). */
    afterCopy?: () => void
    now?: Date
    /** How long a slice of copying or deleting runs before the event loop gets a turn. */
    sliceMs?: number
  },
): Promise<MoveReport> {
  const tenantId = assertTenantId(opts.tenantId)
  const report: MoveReport = { moved: {}, total: 0 }
  const fromDir = placementFolder(registry.dataDir, opts.from, tenantId)
  const toDir = placementFolder(registry.dataDir, opts.to, tenantId)
  if (fromDir === toDir) {
    opts.switchPlacement()
    return report
  }
  const sliceMs = opts.sliceMs ?? SLICE_MS
  const inboxSince = new Date((opts.now ?? new Date()).getTime() - INBOX_WINDOW_MS).toISOString()
  const parts: Part[] = []
  let committed = false
  try {
    for (const service of opts.services) {
      // A tenant coming back to a file it once left: its fences there come down first.
      if (existsSync(join(toDir, `${service}.db`))) {
        const target = registry.openAt(service, opts.to, tenantId)
        target.write(() => dropFences(target, tenantId))
      }
    }
    for (const service of opts.services) {
      if (!existsSync(join(fromDir, `${service}.db`))) continue
      const source = registry.openAt(service, opts.from, tenantId)
      source.write(() => dropFences(source, null))
      const part: Part = {
        service,
        source,
        tables: tenantTables(source),
        release: source.hold(),
        stagingPath: stagingPath(toDir, service, tenantId),
        targetPath: join(toDir, `${service}.db`),
        capturing: false,
        staging: null,
        counts: {},
        moved: null,
      }
      parts.push(part)
      if (!hasRows(source.sqlite, part.tables, tenantId)) continue
      startCapture(source, tenantId, part.tables)
      part.capturing = true
      await nextTurn()
      part.staging = openStaging(
        part.stagingPath,
        registry.migrationsOf(service),
        part.tables,
        part.targetPath,
      )
      await nextTurn()
      part.counts = await copySnapshot(part.source.path, part.staging, part.tables, {
        tenantId,
        inboxSince,
        sliceMs,
        target: part.targetPath,
      })
      await syncFileAsync(part.stagingPath)
    }

    const lockAll = (i: number): void => {
      if (i === parts.length) {
        finalStep(registry, parts, opts, { tenantId, inboxSince })
        return
      }
      parts[i]!.source.write(() => {
        parts[i]!.source.sqlite.run('PRAGMA defer_foreign_keys = ON')
        lockAll(i + 1)
      })
    }
    lockAll(0)
    committed = true

    for (const part of parts) {
      if (!part.moved) continue
      // Opened through the registry now: its relay publishes the moved unsent outbox rows.
      registry.openAt(part.service, opts.to, tenantId)
      report.moved[part.service] = part.moved
    }
    for (const part of parts) {
      if (part.moved) await deleteInSlices(part, tenantId, sliceMs)
    }
  } finally {
    for (const part of parts) {
      part.staging?.close()
      removeStaging(part.stagingPath)
      // Dropped by the final step when it committed; after a failure anywhere, here.
      if (part.capturing && !committed) {
        try {
          part.source.write(() => dropCapture(part.source, tenantId))
        } catch {
          // Left for settleMoveLeftovers: the triggers only log, they change nothing.
        }
      }
      part.release()
    }
  }
  for (const tables of Object.values(report.moved)) {
    for (const n of Object.values(tables)) report.total += n
  }
  return report
}

/**
 * Copies a tenant's rows (and recent inbox records) from a snapshot of the database at
 * `sourcePath` into an open staging file, yielding to the event loop between slices, and checks
 * the copy against the snapshot's counts. Returns the rows copied per table. Used by the tier move
 * and by a move to another instance (tenants/handoff.ts).
 */
export async function copySnapshot(
  sourcePath: string,
  staging: Database,
  tables: readonly TenantTable[],
  opts: { tenantId: string; inboxSince: string; sliceMs: number; target: string },
): Promise<Record<string, number>> {
  const { tenantId } = opts
  const reader = new Database(sourcePath, { readonly: true, strict: true })
  try {
    reader.run('PRAGMA busy_timeout = 5000')
    reader.run('BEGIN')
    staging.run('BEGIN')
    const copy = copyRows(reader, staging, tables, tenantId, opts.inboxSince, opts.sliceMs)
    let counts: Record<string, number>
    for (let step = copy.next(); ; step = copy.next()) {
      if (step.done) {
        counts = step.value
        break
      }
      // Committed a slice at a time: one commit of every page at the end blocks for long.
      staging.run('COMMIT')
      await nextTurn()
      staging.run('BEGIN')
    }
    staging.run('COMMIT')
    // Counted here, against the snapshot, so the final step need not count every row again.
    for (const t of tables) {
      await nextTurn()
      const expected = countOf(reader, t.name, tenantId)
      await nextTurn()
      const landed = countOf(staging, t.name, tenantId)
      const n = counts[t.name] ?? 0
      if (landed !== expected || n !== expected) {
        throw new MoveError(
          `${t.name}: ${expected} rows to move, ${n} read, ${landed} in the copy for ${opts.target}`,
        )
      }
    }
    reader.run('COMMIT')
    return counts
  } finally {
    reader.close()
  }
}

/** Step 2 of `moveTenantData`, run with every source locked for writing. */
function finalStep(
  registry: TenantRegistry,
  parts: Part[],
  opts: { to: Placement; switchPlacement: () => void; afterCopy?: () => void },
  ctx: { tenantId: string; inboxSince: string },
) {
  const { tenantId } = ctx
  for (const part of parts) {
    const source = part.source.sqlite
    if (part.staging) {
      part.staging.run('BEGIN')
      const captured = readCapture(part.source, tenantId, part.tables)
      const delta = applyCaptured(source, part.staging, part.tables, captured, tenantId)
      for (const [table, n] of Object.entries(delta)) {
        part.counts[table] = (part.counts[table] ?? 0) + n
      }
    } else if (hasRows(source, part.tables, tenantId)) {
      // Rows written since the move began to a file that had none: copied now, under the lock.
      part.staging = openStaging(
        part.stagingPath,
        registry.migrationsOf(part.service),
        part.tables,
        part.targetPath,
      )
      part.staging.run('BEGIN')
      // With no time limit the copy never pauses: one step copies everything.
      const copy = copyRows(source, part.staging, part.tables, tenantId, ctx.inboxSince, Infinity)
      part.counts = copy.next().value ?? {}
      checkCounts(source, part.staging, part.tables, part.counts, tenantId, part.targetPath)
    } else {
      continue
    }
    const moved = Object.fromEntries(Object.entries(part.counts).filter(([, n]) => n > 0))
    part.staging.run('COMMIT')
    part.staging.close()
    part.staging = null
    if (Object.keys(moved).length) part.moved = moved
  }
  for (const part of parts) {
    if (part.capturing) dropCapture(part.source, tenantId)
  }
  for (const part of parts) {
    if (!part.moved) continue
    if (!placeStaging(part.stagingPath, part.targetPath)) {
      mergeStaging(
        registry.openAt(part.service, opts.to, tenantId),
        part.stagingPath,
        part.tables,
        tenantId,
      )
    }
  }
  // A writer that looked up the old placement before the switch is refused, not lost.
  for (const part of parts) fenceTenant(part.source, tenantId, part.tables)
  // Every copy in place, the old placement still authoritative: a crash here must lose nothing.
  opts.afterCopy?.()
  opts.switchPlacement()
  for (const part of parts) {
    if (part.moved && hasOutbox(part.source.sqlite)) {
      part.source.sqlite
        .query('DELETE FROM outbox WHERE tenant_id = ? AND sent_at IS NULL')
        .run(tenantId)
    }
  }
}

/**
 * Step 3 of `moveTenantData`: deletes the tenant's stale rows from a source in short write
 * transactions, referencing tables first, while another thread checkpoints the file
 * (tenants/move-checkpoint.ts). Should the foreign keys not allow that order (a cycle), the rest
 * goes in one transaction with their checks deferred.
 */
async function deleteInSlices(part: Part, tenantId: string, sliceMs: number) {
  const { source } = part
  const autocheckpoint =
    source.sqlite.query<{ wal_autocheckpoint: number }, []>('PRAGMA wal_autocheckpoint').get()
      ?.wal_autocheckpoint ?? 1000
  source.sqlite.run('PRAGMA wal_autocheckpoint = 0')
  const checkpointer = startCheckpointer(source.path)
  try {
    for (const t of deleteOrder(source.sqlite, part.tables)) {
      const del = `DELETE FROM ${q(t.name)} WHERE ${keyOf(t)} IN (SELECT ${keyList(t)} FROM ${q(t.name)} WHERE tenant_id = ? LIMIT 128)`
      let more = true
      while (more) {
        source.write(() => {
          const start = performance.now()
          do more = source.sqlite.query(del).run(tenantId).changes > 0
          while (more && performance.now() - start < sliceMs)
        })
        if (more) await nextTurn()
      }
    }
  } catch (err) {
    if (!/FOREIGN KEY/i.test((err as Error).message)) throw err
    source.write(() => {
      source.sqlite.run('PRAGMA defer_foreign_keys = ON')
      for (const t of part.tables) {
        source.sqlite.query(`DELETE FROM ${q(t.name)} WHERE tenant_id = ?`).run(tenantId)
      }
    })
  } finally {
    await checkpointer.stop()
    source.sqlite.run(`PRAGMA wal_autocheckpoint = ${autocheckpoint}`)
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
  const tenantId = assertTenantId(opts.tenantId)
  const dir = placementFolder(registry.dataDir, opts.placement, tenantId)
  let total = 0
  for (const service of opts.services) {
    if (!existsSync(join(dir, `${service}.db`))) continue
    const db = registry.openAt(service, opts.placement, tenantId)
    db.write(() => {
      db.sqlite.run('PRAGMA defer_foreign_keys = ON')
      for (const t of tenantTables(db)) {
        total += db.sqlite
          .query(`DELETE FROM ${q(t.name)} WHERE tenant_id = ?`)
          .run(tenantId).changes
      }
    })
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
