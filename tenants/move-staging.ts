import { Database } from 'bun:sqlite'
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, rmSync, unlinkSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { applyMigrations, type Migration } from './db.ts'
import { MoveError, type TenantTable, tablesOf } from './move-tables.ts'

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
