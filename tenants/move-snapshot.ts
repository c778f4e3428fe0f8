import { Database } from 'bun:sqlite'
import { copyRows } from './move-copy.ts'
import { countOf, MoveError, nextTurn, type TenantTable } from './move-tables.ts'

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
