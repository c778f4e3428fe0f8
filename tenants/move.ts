import { existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { assertTenantId } from '../schema/tenant-id.ts'
import type { Db } from './db.ts'
import { type Placement, placementFolder, type TenantRegistry } from './registry.ts'

/** Tables that are never a tenant's rows: migration bookkeeping and SQLite's own. */
const SKIP = new Set(['__migrations', 'inbox', 'sqlite_sequence'])
/** Consumer inbox records younger than this travel with the tenant, so redeliveries stay no-ops. */
const INBOX_WINDOW_MS = 7 * 86_400_000

const q = (name: string) => `"${name.replaceAll('"', '""')}"`

interface TenantTable {
  name: string
  columns: string[]
  /** The column of an `INTEGER PRIMARY KEY` (a rowid alias), whose values are local to a file. */
  rowidColumn: string | null
}

/**
 * Every table of a database that holds tenant rows: found from `sqlite_master` and
 * `PRAGMA table_xinfo`, so a service's new tables are covered without a list to keep up to date.
 */
export function tenantTables(db: Db): TenantTable[] {
  const tables = db.sqlite
    .query<{ name: string; sql: string | null }, []>(
      "SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name",
    )
    .all()
    .filter((t) => !SKIP.has(t.name) && !t.name.startsWith('sqlite_'))
    .filter((t) => !/^\s*CREATE\s+VIRTUAL/i.test(t.sql ?? ''))
  const out: TenantTable[] = []
  for (const t of tables) {
    const info = db.sqlite
      .query<{ name: string; hidden: number; type: string; pk: number }, []>(
        `PRAGMA table_xinfo(${q(t.name)})`,
      )
      .all()
      .filter((c) => c.hidden === 0)
    const cols = info.map((c) => c.name)
    const pks = info.filter((c) => c.pk > 0)
    const rowidColumn =
      pks.length === 1 && pks[0]!.type.toUpperCase() === 'INTEGER' ? pks[0]!.name : null
    if (cols.includes('tenant_id')) out.push({ name: t.name, columns: cols, rowidColumn })
  }
  return out
}

const countOf = (db: Db, table: string, tenantId: string): number =>
  db.sqlite
    .query<{ n: number }, [string]>(`SELECT count(*) AS n FROM ${q(table)} WHERE tenant_id = ?`)
    .get(tenantId)?.n ?? 0

/** How many rows a tenant has in each tenant table of a database. */
export function countTenantRows(db: Db, tenantId: string): Record<string, number> {
  const out: Record<string, number> = {}
  for (const t of tenantTables(db)) out[t.name] = countOf(db, t.name, tenantId)
  return out
}

export interface MoveReport {
  /** Rows moved per service and table. */
  moved: Record<string, Record<string, number>>
  total: number
}

export class MoveError extends Error {}

/**
 * Moves one tenant's rows between two placements (Free→Pro, Pro→Enterprise, downgrades), for
 * every service whose database exists under the old placement:
 *
 * 1. every source file is locked for writing (`BEGIN IMMEDIATE`, nested) so nothing the tenant
 *    writes can land between the copy and the delete; readers keep reading the old placement (WAL);
 * 2. each target database is opened through the registry (migrations apply), cleared of the tenant's
 *    rows left by an interrupted earlier attempt, filled in one transaction and its counts checked;
 * 3. `switchPlacement` makes the new placement current;
 * 4. the tenant's rows are deleted from the sources, and the locks released.
 *
 * A failure before the switch leaves the old placement authoritative (the target copies are
 * cleared on the next attempt); a crash after it leaves stale source rows that `purgeTenantRows`
 * removes. Outbox rows move with their sent state (unsent ones are then published from the new
 * database); recent inbox records are copied so redelivered events stay no-ops.
 *
 * @example
 * moveTenantData(registry, { tenantId, from, to, services, switchPlacement: () => registry.setPlacement(tenantId, to) })
 */
export function moveTenantData(
  registry: TenantRegistry,
  opts: {
    tenantId: string
    from: Placement
    to: Placement
    services: readonly string[]
    switchPlacement: () => void
    /** Called when every copy committed and the old placement is still current (crash tests). */
    afterCopy?: () => void
    now?: Date
  },
): MoveReport {
  const tenantId = assertTenantId(opts.tenantId)
  const report: MoveReport = { moved: {}, total: 0 }
  const fromDir = placementFolder(registry.dataDir, opts.from, tenantId)
  const toDir = placementFolder(registry.dataDir, opts.to, tenantId)
  if (fromDir === toDir) {
    opts.switchPlacement()
    return report
  }
  const pairs: Array<{ service: string; source: Db; tables: TenantTable[] }> = []
  for (const service of opts.services) {
    if (!existsSync(join(fromDir, `${service}.db`))) continue
    const source = registry.openAt(service, opts.from, tenantId)
    const tables = tenantTables(source)
    if (tables.some((t) => countOf(source, t.name, tenantId) > 0)) {
      pairs.push({ service, source, tables })
    }
  }
  const inboxSince = new Date((opts.now ?? new Date()).getTime() - INBOX_WINDOW_MS).toISOString()

  const body = () => {
    for (const { service, source, tables } of pairs) {
      const target = registry.openAt(service, opts.to, tenantId)
      report.moved[service] = copyInto(source, target, tables, tenantId, inboxSince)
    }
    // Every copy committed, the old placement still authoritative: a crash here must lose nothing.
    opts.afterCopy?.()
    opts.switchPlacement()
    for (const { source, tables } of pairs) {
      for (const t of tables) {
        source.sqlite.query(`DELETE FROM ${q(t.name)} WHERE tenant_id = ?`).run(tenantId)
      }
    }
  }
  const lockAll = (i: number): void => {
    if (i === pairs.length) {
      body()
      return
    }
    pairs[i]!.source.write(() => {
      pairs[i]!.source.sqlite.run('PRAGMA defer_foreign_keys = ON')
      lockAll(i + 1)
    })
  }
  lockAll(0)
  for (const tables of Object.values(report.moved)) {
    for (const n of Object.values(tables)) report.total += n
  }
  return report
}

function copyInto(
  source: Db,
  target: Db,
  tables: TenantTable[],
  tenantId: string,
  inboxSince: string,
): Record<string, number> {
  const moved: Record<string, number> = {}
  target.write(() => {
    target.sqlite.run('PRAGMA defer_foreign_keys = ON')
    const targetColumns = new Map(tenantTables(target).map((t) => [t.name, new Set(t.columns)]))
    for (const t of tables) {
      const have = targetColumns.get(t.name)
      if (!have) throw new MoveError(`table ${t.name} does not exist in ${target.path}`)
      const missing = t.columns.filter((c) => !have.has(c))
      if (missing.length) {
        throw new MoveError(`${target.path}: table ${t.name} lacks ${missing.join(', ')}`)
      }
      target.sqlite.query(`DELETE FROM ${q(t.name)} WHERE tenant_id = ?`).run(tenantId)
      const cols = renumbers(source, target, t, tenantId)
        ? t.columns.filter((c) => c !== t.rowidColumn)
        : t.columns
      const list = cols.map(q).join(', ')
      const insert = target.sqlite.prepare(
        `INSERT INTO ${q(t.name)} (${list}) VALUES (${cols.map(() => '?').join(', ')})`,
      )
      const select = source.sqlite.prepare<Record<string, unknown>, [string]>(
        `SELECT ${list} FROM ${q(t.name)} WHERE tenant_id = ?${t.name === 'outbox' ? ' ORDER BY seq' : ''}`,
      )
      let n = 0
      for (const row of select.iterate(tenantId)) {
        insert.run(...(cols.map((c) => row[c]) as never[]))
        n++
      }
      const expected = countOf(source, t.name, tenantId)
      const landed = countOf(target, t.name, tenantId)
      if (n !== expected || landed !== expected) {
        throw new MoveError(
          `${t.name}: ${expected} rows to move, ${n} read, ${landed} in ${target.path}`,
        )
      }
      if (n) moved[t.name] = n
    }
    const hasInbox = (db: Db) =>
      !!db.sqlite.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'inbox'").get()
    if (hasInbox(source) && hasInbox(target)) {
      const insert = target.sqlite.prepare(
        'INSERT OR IGNORE INTO inbox (consumer, event_id, handled_at) VALUES (?, ?, ?)',
      )
      const select = source.sqlite.prepare<
        { consumer: string; event_id: string; handled_at: string },
        [string]
      >('SELECT consumer, event_id, handled_at FROM inbox WHERE handled_at >= ?')
      for (const r of select.iterate(inboxSince)) insert.run(r.consumer, r.event_id, r.handled_at)
    }
  })
  return moved
}

/**
 * Whether a table's integer key is left for the target to assign: always for the outbox (its
 * sequence is local to a file; the event id identifies an event), and for other tables when the
 * tenant's keys collide with rows already in the target (a downgrade into a shared file) and no
 * foreign key points at them. Colliding keys that are referenced stop the move before the switch.
 */
function renumbers(source: Db, target: Db, t: TenantTable, tenantId: string): boolean {
  if (!t.rowidColumn) return false
  if (t.name === 'outbox') return true
  const col = q(t.rowidColumn)
  const range = source.sqlite
    .query<{ lo: number | null; hi: number | null }, [string]>(
      `SELECT min(${col}) AS lo, max(${col}) AS hi FROM ${q(t.name)} WHERE tenant_id = ?`,
    )
    .get(tenantId)
  if (range?.lo == null || range.hi == null) return false
  const clash = target.sqlite
    .query(`SELECT 1 FROM ${q(t.name)} WHERE ${col} BETWEEN ? AND ? LIMIT 1`)
    .get(range.lo, range.hi)
  if (!clash) return false
  const tables = source.sqlite
    .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table'")
    .all()
  for (const other of tables) {
    const refs = source.sqlite
      .query<{ table: string }, []>(`PRAGMA foreign_key_list(${q(other.name)})`)
      .all()
    if (refs.some((r) => r.table === t.name)) {
      throw new MoveError(
        `${t.name}: keys ${range.lo}..${range.hi} already exist in ${target.path} and are referenced by ${other.name}`,
      )
    }
  }
  return true
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
  const removeDb = (path: string) => {
    registry.closePath?.(path)
    for (const suffix of ['', '-wal', '-shm']) {
      if (existsSync(path + suffix)) {
        rmSync(path + suffix, { force: true })
        files++
      }
    }
  }
  const own = placementFolder(registry.dataDir, { isolation: 'schema' }, tenantId)
  const dedicated =
    opts.placement.isolation === 'database'
      ? placementFolder(registry.dataDir, opts.placement, tenantId)
      : null
  for (const service of opts.services) {
    removeDb(join(own, `${service}.db`))
    if (dedicated && dedicated !== own) removeDb(join(dedicated, `${service}.db`))
  }
  if (existsSync(own)) {
    rmSync(own, { recursive: true, force: true })
    files++
  }
  registry.evictPlacement?.(tenantId)
  return { rows, files }
}
