import type { Database } from 'bun:sqlite'
import { countOf, hasInbox, keyIs, MoveError, q, type TenantTable } from './move-tables.ts'

/** Columns copied: the rowid itself too when it is not a column, so it stays the source's. */
export const copyColumns = (t: TenantTable) =>
  t.rowidColumn || t.key ? t.columns : ['rowid', ...t.columns]

const insertInto = (staging: Database, t: TenantTable, cols: string[]) =>
  staging.prepare(
    `INSERT INTO ${q(t.name)} (${cols.map(q).join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`,
  )

/**
 * Copies the tenant's rows and recent inbox records from `from` into a staging file inside the
 * caller's transaction, at once: the move's final step uses it, under the source's write lock,
 * for rows that reached a file that had none when the move began (the bulk of a copy runs on a
 * thread of its own, tenants/move-snapshot.ts).
 */
export function copyRows({
  from,
  staging,
  tables,
  tenantId,
  inboxSince,
}: {
  from: Database
  staging: Database
  tables: readonly TenantTable[]
  tenantId: string
  inboxSince: string
}): Record<string, number> {
  const copied: Record<string, number> = {}
  for (const t of tables) {
    const cols = copyColumns(t)
    const insert = insertInto(staging, t, cols)
    const select = from.prepare<Record<string, unknown>, [string]>(
      `SELECT ${cols.map(q).join(', ')} FROM ${q(t.name)} WHERE tenant_id = ?`,
    )
    let n = 0
    for (const row of select.iterate(tenantId)) {
      insert.run(...(cols.map((c) => row[c]) as never[]))
      n++
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
export function applyCaptured({
  source,
  staging,
  tables,
  captured,
  tenantId,
}: {
  source: Database
  staging: Database
  tables: readonly TenantTable[]
  captured: Map<string, unknown[][]>
  tenantId: string
}): Record<string, number> {
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
export function checkCounts({
  source,
  staging,
  tables,
  copied,
  tenantId,
  targetPath,
}: {
  source: Database
  staging: Database
  tables: readonly TenantTable[]
  copied: Record<string, number>
  tenantId: string
  targetPath: string
}): void {
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
