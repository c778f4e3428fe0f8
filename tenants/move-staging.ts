import { Database } from 'bun:sqlite'
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, rmSync, unlinkSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { applyMigrations, type Db, type Migration } from './db.ts'
import {
  countOf,
  hasInbox,
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

/** A connection to a staging file a copy has filled, for the move's final step. */
export function reopenStaging(path: string): Database {
  const staging = new Database(path, { strict: true })
  staging.run('PRAGMA journal_mode = MEMORY')
  staging.run('PRAGMA synchronous = OFF')
  return staging
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
