import { Database } from 'bun:sqlite'
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { assertTenantId } from '../schema/tenant-id.ts'
import type { Db } from './db.ts'
import {
  copySnapshot,
  INBOX_WINDOW_MS,
  purgeTenantRowsInSlices,
  removeDatabaseFile,
} from './move.ts'
import { dropFences, fenceTenant } from './move-fence.ts'
import { mergeEarly, mergeStaging, planMerge } from './move-merge.ts'
import { DELETE_SLICE_MS } from './move-purge.ts'
import { openStaging, placeStaging, removeStaging, syncFileAsync } from './move-staging.ts'
import { countOf, hasRows, MoveError, type TenantTable, tablesOf } from './move-tables.ts'
import { processAlive } from './process-alive.ts'
import { type Placement, placementFolder, type TenantRegistry } from './registry.ts'

/**
 * A tenant moving from one instance of a partitioned service to another (DESIGN §12,
 * `mmp tenant move --to`): the files travel over HTTP, not through a shared disk.
 *
 * 1. `packTenant` on the instance the tenant leaves: its writes there are fenced (refused with
 *    503, events for it set aside for replay) and its rows, recent inbox records and outbox copied
 *    into a file of its own, which the other instance downloads. Reads keep being served.
 * 2. `unpackTenant` on the instance it goes to: the file is put in place (renamed in, or merged
 *    into the shared file).
 * 3. `releaseTenant` on the one it left, once the tenant service recorded the new instance: the
 *    tenant's rows there are erased and the fences dropped. After a failed move it only drops the
 *    fences.
 */

/** Long enough for any pack, download and unpack; a move that dies meanwhile frees the tenant then. */
export const HANDOFF_FENCE_S = 600

/** The tables a handoff fences: not the outbox, whose rows the relay still marks as sent. */
const fenced = (tables: readonly TenantTable[]) => tables.filter((t) => t.name !== 'outbox')

const handoffDir = (registry: Pick<TenantRegistry, 'dataDir'>) =>
  join(registry.dataDir, 'run', 'handoff')

const folderOf = (registry: TenantRegistry, tenantId: string) =>
  placementFolder(registry.dataDir, registry.placement(tenantId), tenantId)

/** A handoff file's process: `<service>-<tenant>[-in]-<pid>.db`, and what SQLite or a download adds. */
const HANDOFF_FILE = /-(\d+)\.db(?:\.part|-journal|-wal|-shm)?$/

/** When this process started: a file of its pid older than that is a dead namesake's. */
const startedAt = Date.now() - process.uptime() * 1000

/**
 * Removes the packed and downloaded files in `run/handoff` whose process is gone: a move killed
 * between packing and sending (the fault point `handoff.after_pack`) leaves its file there, as
 * large as the tenant. Run when a service starts and before each pack or unpack; the files of a
 * live process (another worker's handoff under way) stay. Returns the files removed.
 */
export function clearHandoffLeftovers(registry: Pick<TenantRegistry, 'dataDir'>): number {
  const dir = handoffDir(registry)
  if (!existsSync(dir)) return 0
  let removed = 0
  for (const name of readdirSync(dir)) {
    const pid = Number(HANDOFF_FILE.exec(name)?.[1])
    if (!pid) continue
    const path = join(dir, name)
    try {
      const ours = pid === process.pid && statSync(path).mtimeMs >= startedAt
      if (ours || (pid !== process.pid && processAlive(pid))) continue
      rmSync(path, { force: true })
      removed++
    } catch {
      // Gone meanwhile, or not ours to remove: the next sweep sees it again.
    }
  }
  return removed
}

/**
 * Fences the tenant's writes in this instance's database of `service` and copies its rows into a
 * file of their own. Returns the file (the caller sends it and removes it) and its row counts, or
 * null when this instance holds nothing of the tenant.
 */
export async function packTenant(
  registry: TenantRegistry,
  opts: { service: string; tenantId: string; now?: Date },
): Promise<{ path: string; rows: number } | null> {
  const tenantId = assertTenantId(opts.tenantId)
  const placement = registry.placement(tenantId)
  if (!existsSync(join(folderOf(registry, tenantId), `${opts.service}.db`))) return null
  const source = registry.openAt(opts.service, placement, tenantId)
  const release = source.hold()
  const tables = tablesOf(source.sqlite)
  const path = join(handoffDir(registry), `${opts.service}-${tenantId}-${process.pid}.db`)
  clearHandoffLeftovers(registry)
  try {
    // Under the write lock: a write already under way finishes before the fence, none after it.
    source.write(() =>
      fenceTenant({
        db: source,
        tenantId,
        tables: fenced(tables),
        seconds: HANDOFF_FENCE_S,
        elsewhere: true,
      }),
    )
    if (!hasRows(source.sqlite, tables, tenantId)) return null
    mkdirSync(handoffDir(registry), { recursive: true })
    openStaging(path, registry.migrationsOf(opts.service), tables, path).close()
    const counts = await copySnapshot(source.path, path, tables, {
      tenantId,
      inboxSince: new Date((opts.now ?? new Date()).getTime() - INBOX_WINDOW_MS).toISOString(),
      target: path,
    })
    const rows = Object.values(counts).reduce((a, b) => a + b, 0)
    return { path, rows }
  } catch (err) {
    removeStaging(path)
    throw err
  } finally {
    release()
  }
}

/**
 * Puts a packed tenant in place on this instance: renamed in as the tenant's own file, or merged
 * into the file it shares (its rows there, left from an earlier stay, replaced). Returns the rows.
 */
export async function unpackTenant(
  registry: TenantRegistry,
  /** The packed file, whole or as it arrives over HTTP (written to disk as it comes). */
  opts: { service: string; tenantId: string; file: Uint8Array | ReadableStream<Uint8Array> },
): Promise<number> {
  const tenantId = assertTenantId(opts.tenantId)
  const placement: Placement = registry.placement(tenantId)
  const dir = folderOf(registry, tenantId)
  const path = join(handoffDir(registry), `${opts.service}-${tenantId}-in-${process.pid}.db`)
  clearHandoffLeftovers(registry)
  mkdirSync(handoffDir(registry), { recursive: true })
  if (opts.file instanceof Uint8Array) await Bun.write(`${path}.part`, opts.file)
  else await Bun.write(`${path}.part`, new Response(opts.file))
  renameSync(`${path}.part`, path)
  try {
    const packed = new Database(path, { readonly: true, strict: true })
    let tables: TenantTable[]
    let rows = 0
    const counts: Record<string, number> = {}
    try {
      if (packed.query('PRAGMA quick_check').get() === null)
        throw new MoveError('the packed file is not a database')
      tables = tablesOf(packed)
      for (const t of tables) {
        counts[t.name] = countOf(packed, t.name, tenantId)
        rows += counts[t.name]!
      }
    } finally {
      packed.close()
    }
    await syncFileAsync(path)
    mkdirSync(dir, { recursive: true })
    const target = join(dir, `${opts.service}.db`)
    if (existsSync(target)) {
      const db = registry.openAt(opts.service, placement, tenantId)
      db.write(() => dropFences(db, tenantId))
      await mergePacked({ db, path, tables, tenantId, counts })
    } else if (!placeStaging(path, target)) {
      const into = registry.openAt(opts.service, placement, tenantId)
      mergeStaging({ target: into, path, tables, tenantId })
    }
    // Opened through the registry: its relay publishes the tenant's unsent outbox rows.
    registry.openAt(opts.service, placement, tenantId)
    return rows
  } finally {
    rmSync(path, { force: true })
  }
}

/**
 * Merges a packed tenant into a file this instance already has (the shared one): the rows of the
 * tables a row can be found by go in short transactions with the event loop turning between them,
 * the rest in one at the end (tenants/move-merge.ts). Nothing is logged meanwhile: the instance
 * the tenant leaves refuses its writes, and this one serves it only once the move is recorded.
 */
async function mergePacked({
  db,
  path,
  tables,
  tenantId,
  counts,
}: {
  db: Db
  path: string
  tables: readonly TenantTable[]
  tenantId: string
  counts: Record<string, number>
}): Promise<void> {
  const plan = planMerge(db, tables)
  const release = db.hold()
  try {
    const merged = plan.early.length
      ? await mergeEarly(db, path, plan, { tenantId, sliceMs: DELETE_SLICE_MS, expected: counts })
      : null
    const early = merged && { plan, merged, stale: new Map(), fresh: new Map(), counts }
    mergeStaging({ target: db, path, tables, tenantId, early })
  } finally {
    release()
  }
}

/**
 * After a move: erases the tenant's rows of `service` on this instance (its own file, or its rows
 * in the shared one) and drops its fences. After a failed move (`erase: false`): only the fences.
 */
export async function releaseTenant(
  registry: TenantRegistry,
  opts: { service: string; tenantId: string; erase: boolean },
): Promise<number> {
  const tenantId = assertTenantId(opts.tenantId)
  const placement = registry.placement(tenantId)
  const path = join(folderOf(registry, tenantId), `${opts.service}.db`)
  if (!existsSync(path)) return 0
  const db = registry.openAt(opts.service, placement, tenantId)
  if (!opts.erase) {
    db.write(() => dropFences(db, tenantId))
    return 0
  }
  // In short transactions, the event loop turning between them: other tenants share the file.
  const rows = await purgeTenantRowsInSlices(registry, {
    tenantId,
    placement,
    services: [opts.service],
  })
  db.write(() => dropFences(db, tenantId))
  if (placement.isolation !== 'shared') removeDatabaseFile(registry, path)
  return rows
}
