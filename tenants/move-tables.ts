import type { Database } from 'bun:sqlite'

/** Tables that are never a tenant's rows: migration bookkeeping and SQLite's own. */
const SKIP = new Set(['__migrations', 'inbox', 'sqlite_sequence'])

export const q = (name: string) => `"${name.replaceAll('"', '""')}"`

export class MoveError extends Error {}

/**
 * Lets the event loop run (other tenants' requests) between slices of a move's work. Two
 * immediates: Bun runs an immediate queued outside the immediate phase in the same turn of the
 * loop, before any timer or socket gets its turn; the second is queued inside it and waits.
 */
export const nextTurn = () =>
  new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)))

export interface TenantTable {
  name: string
  columns: string[]
  /** The column of an `INTEGER PRIMARY KEY` (a rowid alias), whose values are local to a file. */
  rowidColumn: string | null
  /** A `WITHOUT ROWID` table's primary key columns (a row is found by them); null: the rowid. */
  key: string[] | null
}

/** SQL naming one row of a table: its rowid, or its primary key columns as a row value. */
export const keyOf = (t: TenantTable, prefix = '') =>
  t.key ? `(${keyList(t, prefix)})` : `${prefix}rowid`

/** The key's columns as a select list. */
export const keyList = (t: TenantTable, prefix = '') =>
  t.key ? t.key.map((c) => prefix + q(c)).join(', ') : `${prefix}rowid`

/** A condition on the key, with one `?` per key column. */
export const keyIs = (t: TenantTable) =>
  t.key ? `${keyOf(t)} = (${t.key.map(() => '?').join(', ')})` : 'rowid = ?'

/**
 * Every table of a database that holds tenant rows: found from `sqlite_master` and
 * `PRAGMA table_xinfo`, so a service's new tables are covered without a list to keep up to date.
 * Tables of a move's change capture have no `tenant_id` and are never among them.
 */
export function tablesOf(sqlite: Database): TenantTable[] {
  const tables = sqlite
    .query<{ name: string; sql: string | null }, []>(
      "SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name",
    )
    .all()
    .filter((t) => !SKIP.has(t.name) && !t.name.startsWith('sqlite_'))
    .filter((t) => !/^\s*CREATE\s+VIRTUAL/i.test(t.sql ?? ''))
  const out: TenantTable[] = []
  for (const t of tables) {
    const info = sqlite
      .query<{ name: string; hidden: number; type: string; pk: number }, []>(
        `PRAGMA table_xinfo(${q(t.name)})`,
      )
      .all()
      .filter((c) => c.hidden === 0)
    const cols = info.map((c) => c.name)
    if (!cols.includes('tenant_id')) continue
    const pks = info.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk)
    const withoutRowid = /\)\s*WITHOUT\s+ROWID\s*;?\s*$/i.test(t.sql ?? '')
    const rowidColumn =
      !withoutRowid && pks.length === 1 && pks[0]!.type.toUpperCase() === 'INTEGER'
        ? pks[0]!.name
        : null
    const key = withoutRowid ? pks.map((c) => c.name) : null
    out.push({ name: t.name, columns: cols, rowidColumn, key })
  }
  return out
}

export const countOf = (sqlite: Database, table: string, tenantId: string): number =>
  sqlite
    .query<{ n: number }, [string]>(`SELECT count(*) AS n FROM ${q(table)} WHERE tenant_id = ?`)
    .get(tenantId)?.n ?? 0

export const hasRows = (sqlite: Database, tables: readonly TenantTable[], tenantId: string) =>
  tables.some(
    (t) => !!sqlite.query(`SELECT 1 FROM ${q(t.name)} WHERE tenant_id = ? LIMIT 1`).get(tenantId),
  )

const hasTable = (sqlite: Database, name: string) =>
  !!sqlite.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name)

export const hasInbox = (sqlite: Database) => hasTable(sqlite, 'inbox')
export const hasOutbox = (sqlite: Database) => hasTable(sqlite, 'outbox')

/**
 * Tables in an order that deletes referencing rows before the rows they reference, so a
 * tenant's rows can leave a file in several transactions with foreign keys enforced.
 */
export function deleteOrder(sqlite: Database, tables: readonly TenantTable[]): TenantTable[] {
  const refs = new Map<string, Set<string>>()
  for (const t of tables) {
    const list = sqlite
      .query<{ table: string }, []>(`PRAGMA foreign_key_list(${q(t.name)})`)
      .all()
      .map((r) => r.table)
      .filter((name) => name !== t.name)
    refs.set(t.name, new Set(list))
  }
  const left = [...tables]
  const out: TenantTable[] = []
  while (left.length) {
    const i = left.findIndex((t) => !left.some((u) => u !== t && refs.get(u.name)?.has(t.name)))
    if (i < 0) {
      // A cycle: the rest goes in any order (the caller falls back to one transaction).
      out.push(...left.splice(0))
    } else out.push(...left.splice(i, 1))
  }
  return out
}

/**
 * Whether a table's integer key is left for the target to assign: always for the outbox (its
 * sequence is local to a file; the event id identifies an event), and for other tables when the
 * tenant's keys collide with rows already in the target (a downgrade into a shared file) and no
 * foreign key points at them. Colliding keys that are referenced stop the move before the switch.
 */
export function renumbers({
  source,
  target,
  targetPath,
  table: t,
  tenantId,
}: {
  source: Database
  target: Database
  targetPath: string
  table: TenantTable
  tenantId: string
}): boolean {
  if (!t.rowidColumn) return false
  if (t.name === 'outbox') return true
  const col = q(t.rowidColumn)
  const range = source
    .query<{ lo: number | null; hi: number | null }, [string]>(
      `SELECT min(${col}) AS lo, max(${col}) AS hi FROM ${q(t.name)} WHERE tenant_id = ?`,
    )
    .get(tenantId)
  if (range?.lo == null || range.hi == null) return false
  const clash = target
    .query(`SELECT 1 FROM ${q(t.name)} WHERE ${col} BETWEEN ? AND ? LIMIT 1`)
    .get(range.lo, range.hi)
  if (!clash) return false
  const tables = source
    .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table'")
    .all()
  for (const other of tables) {
    const refs = source
      .query<{ table: string }, []>(`PRAGMA foreign_key_list(${q(other.name)})`)
      .all()
    if (refs.some((r) => r.table === t.name)) {
      throw new MoveError(
        `${t.name}: keys ${range.lo}..${range.hi} already exist in ${targetPath} and are referenced by ${other.name}`,
      )
    }
  }
  return true
}
