import { Database } from 'bun:sqlite'
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, rmSync, unlinkSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { applyMigrations, type Db, type Migration } from './db.ts'
import {
  countOf,
  hasInbox,
  keyIs,
  MoveError,
  q,
  renumbers,
  type TenantTable,
  tablesOf,
} from './move-tables.ts'

/**
 * The copy of one service's rows a tenant move builds before anything switches: a private file
 * beside the target (`<service>.db.moving-<tenant>`), made with the service's migrations and
 * opened by no registry, so neither reads nor the outbox relay see it. Rows keep their source
 * rowids there, which is what lets the captured changes (tenants/move-capture.ts) be applied.
 */
export const stagingPath = (dir: string, service: string, tenantId: string) =>
  join(dir, `${service}.db.moving-${tenantId}`)

export function removeStaging(path: string): void {
  for (const suffix of ['', '-journal']) rmSync(path + suffix, { force: true })
}

/** A fresh staging file with the target's schema; throws unless it can hold every source column. */
export function openStaging(
  path: string,
  migrations: readonly Migration[],
  tables: readonly TenantTable[],
  targetPath: string,
): Database {
  removeStaging(path)
  mkdirSync(dirname(path), { recursive: true })
  const staging = new Database(path, { create: true, strict: true })
  try {
    // Private and thrown away on any failure: no WAL, no syncs until it is placed.
    staging.run('PRAGMA journal_mode = MEMORY')
    staging.run('PRAGMA synchronous = OFF')
    applyMigrations(staging, migrations)
    const have = new Map(tablesOf(staging).map((t) => [t.name, new Set(t.columns)]))
    for (const t of tables) {
      const cols = have.get(t.name)
      if (!cols) throw new MoveError(`table ${t.name} does not exist in ${targetPath}`)
      const missing = t.columns.filter((c) => !cols.has(c))
      if (missing.length) {
        throw new MoveError(`${targetPath}: table ${t.name} lacks ${missing.join(', ')}`)
      }
    }
    return staging
  } catch (err) {
    staging.close()
    removeStaging(path)
    throw err
  }
}

/** Columns copied: the rowid itself too when it is not a column, so it stays the source's. */
const copyColumns = (t: TenantTable) =>
  t.rowidColumn || t.key ? t.columns : ['rowid', ...t.columns]

const insertInto = (staging: Database, t: TenantTable, cols: string[]) =>
  staging.prepare(
    `INSERT INTO ${q(t.name)} (${cols.map(q).join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`,
  )

/**
 * Copies the tenant's rows and recent inbox records from `from` into a staging file inside the
 * caller's transaction, pausing (a generator's `yield`) whenever `sliceMs` has passed, so an async
 * caller can let the event loop run. `from` is a snapshot: a read transaction on a connection of
 * the move's own, or the source under its write lock.
 */
export function* copyRows(
  from: Database,
  staging: Database,
  tables: readonly TenantTable[],
  tenantId: string,
  inboxSince: string,
  sliceMs: number,
): Generator<void, Record<string, number>> {
  const copied: Record<string, number> = {}
  let sliceStart = performance.now()
  for (const t of tables) {
    const cols = copyColumns(t)
    const insert = insertInto(staging, t, cols)
    const select = from.prepare<Record<string, unknown>, [string]>(
      `SELECT ${cols.map(q).join(', ')} FROM ${q(t.name)} WHERE tenant_id = ?`,
    )
    let n = 0
    for (const row of select.iterate(tenantId)) {
      insert.run(...(cols.map((c) => row[c]) as never[]))
      if ((++n & 255) === 0 && performance.now() - sliceStart >= sliceMs) {
        yield
        sliceStart = performance.now()
      }
    }
    select.finalize()
    insert.finalize()
    copied[t.name] = n
  }
  if (hasInbox(from) && hasInbox(staging)) {
    const insert = staging.prepare(
      'INSERT OR IGNORE INTO inbox (consumer, event_id, handled_at) VALUES (?, ?, ?)',
    )
    const select = from.prepare<
      { consumer: string; event_id: string; handled_at: string },
      [string]
    >('SELECT consumer, event_id, handled_at FROM inbox WHERE handled_at >= ?')
    for (const r of select.iterate(inboxSince)) insert.run(r.consumer, r.event_id, r.handled_at)
    select.finalize()
    insert.finalize()
  }
  return copied
}

/**
 * Brings a staging copy up to date with the rows the capture logged: each logged key is deleted
 * from the copy, then copied again from the source if it is still the tenant's (deletes first, so
 * a key reused by another row meanwhile never collides). Runs under the source's write lock.
 * Returns the change in the copy's row count per table.
 */
export function applyCaptured(
  source: Database,
  staging: Database,
  tables: readonly TenantTable[],
  captured: Map<string, unknown[][]>,
  tenantId: string,
): Record<string, number> {
  const delta: Record<string, number> = {}
  for (const t of tables) {
    const keys = captured.get(t.name)
    if (!keys) continue
    const del = staging.prepare(`DELETE FROM ${q(t.name)} WHERE ${keyIs(t)}`)
    let n = 0
    for (const key of keys) n -= del.run(...(key as never[])).changes
    del.finalize()
    delta[t.name] = n
  }
  for (const t of tables) {
    const keys = captured.get(t.name)
    if (!keys) continue
    const cols = copyColumns(t)
    const select = source.prepare<Record<string, unknown>, never[]>(
      `SELECT ${cols.map(q).join(', ')} FROM ${q(t.name)} WHERE ${keyIs(t)} AND tenant_id = ?`,
    )
    const insert = insertInto(staging, t, cols)
    let n = 0
    for (const key of keys) {
      const row = select.get(...([...key, tenantId] as never[]))
      if (row) n += insert.run(...(cols.map((c) => row[c]) as never[])).changes
    }
    select.finalize()
    insert.finalize()
    delta[t.name] = (delta[t.name] ?? 0) + n
  }
  const inbox = captured.get('inbox')
  if (inbox && hasInbox(staging)) {
    const select = source.prepare<
      { consumer: string; event_id: string; handled_at: string },
      [string, string]
    >('SELECT consumer, event_id, handled_at FROM inbox WHERE consumer = ? AND event_id = ?')
    const insert = staging.prepare(
      'INSERT OR IGNORE INTO inbox (consumer, event_id, handled_at) VALUES (?, ?, ?)',
    )
    for (const [consumer, eventId] of inbox) {
      const r = select.get(String(consumer), String(eventId))
      if (r) insert.run(r.consumer, r.event_id, r.handled_at)
    }
    select.finalize()
    insert.finalize()
  }
  return delta
}

/**
 * Checks a copy by counting, in both files, the tenant's rows of each table: the source as the
 * copy read it (its snapshot, or under its write lock) against the staging copy and against the
 * rows the copy reports. A copy that differs stops the move before the switch.
 */
export function checkCounts(
  source: Database,
  staging: Database,
  tables: readonly TenantTable[],
  copied: Record<string, number>,
  tenantId: string,
  targetPath: string,
): void {
  for (const t of tables) {
    const expected = countOf(source, t.name, tenantId)
    const landed = countOf(staging, t.name, tenantId)
    const n = copied[t.name] ?? 0
    if (landed !== expected || n !== expected) {
      throw new MoveError(
        `${t.name}: ${expected} rows to move, ${n} read, ${landed} in the copy for ${targetPath}`,
      )
    }
  }
}

/** Flushes a file to disk without blocking the event loop (the bulk of a staging copy). */
export async function syncFileAsync(path: string): Promise<void> {
  const fh = await open(path, 'r+')
  try {
    await fh.sync()
  } finally {
    await fh.close()
  }
}

function syncPath(path: string, flags: string): void {
  const fd = openSync(path, flags)
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/**
 * Puts a closed staging file in place as the target database when no target file exists (a link
 * never replaces a file, so a database someone has open is never swapped under it). The file and
 * its folder are synced first: the source rows are deleted once the placement switches.
 * Returns false when a target file exists; the copy must then be merged into it.
 */
export function placeStaging(path: string, targetPath: string): boolean {
  syncPath(path, 'r+')
  try {
    linkSync(path, targetPath)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw err
  }
  unlinkSync(path)
  syncPath(dirname(targetPath), 'r')
  return true
}

/**
 * Merges a closed staging copy into an existing target database in one transaction (a downgrade
 * into the shared file, or a folder an earlier placement left a file in): the tenant's leftover
 * rows there are cleared first, and integer keys that collide are renumbered as `renumbers` says.
 * This runs in the move's final step and takes time in proportion to the rows.
 */
export function mergeStaging(
  target: Db,
  path: string,
  tables: readonly TenantTable[],
  tenantId: string,
): void {
  const staging = new Database(path, { readonly: true, strict: true })
  const plans: Array<{ t: TenantTable; cols: string[] }> = []
  try {
    for (const t of tables) {
      const cols = renumbers(staging, target.sqlite, target.path, t, tenantId)
        ? t.columns.filter((c) => c !== t.rowidColumn)
        : t.columns
      plans.push({ t, cols })
    }
  } finally {
    staging.close()
  }
  const run = (sql: string, ...params: string[]) => {
    const stmt = target.sqlite.prepare(sql)
    try {
      return stmt.run(...(params as never[]))
    } finally {
      stmt.finalize()
    }
  }
  run('ATTACH DATABASE ? AS mmp_staging', path)
  try {
    target.write(() => {
      target.sqlite.run('PRAGMA defer_foreign_keys = ON')
      for (const { t, cols } of plans) {
        run(`DELETE FROM main.${q(t.name)} WHERE tenant_id = ?`, tenantId)
        const list = cols.map(q).join(', ')
        const order = t.name === 'outbox' ? ' ORDER BY seq' : ''
        const n = run(
          `INSERT INTO main.${q(t.name)} (${list}) SELECT ${list} FROM mmp_staging.${q(t.name)} WHERE tenant_id = ?${order}`,
          tenantId,
        ).changes
        const landed = countOf(target.sqlite, t.name, tenantId)
        if (landed !== n) {
          throw new MoveError(`${t.name}: ${n} rows merged, ${landed} in ${target.path}`)
        }
      }
      if (hasInbox(target.sqlite)) {
        run(
          'INSERT OR IGNORE INTO main.inbox (consumer, event_id, handled_at) SELECT consumer, event_id, handled_at FROM mmp_staging.inbox',
        )
      }
    })
  } finally {
    run('DETACH DATABASE mmp_staging')
  }
}
