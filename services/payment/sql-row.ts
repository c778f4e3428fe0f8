import type { SQLQueryBindings } from 'bun:sqlite'
import { getTableColumns, getTableName, type Table } from 'drizzle-orm'
import { type ColumnKey, selectList } from '../kernel/columns.ts'
import type { Db } from '../kernel/db.ts'

/** `Row` with some of its columns' types narrowed (each must be assignable to the column's). */
export type Narrow<Row, N extends { [K in keyof N]: K extends keyof Row ? Row[K] : never }> = Omit<
  Row,
  keyof N
> &
  N

/**
 * Every column of a table as a hand-written select list (`tenant_id AS tenantId, …`), so the row
 * comes back as `$inferSelect` (for a hot path's `SELECT`; see `selectList`).
 */
export const selectAll = <T extends Table>(table: T): string =>
  selectList(table, Object.keys(getTableColumns(table)) as ColumnKey<T>[])

const inserts = new WeakMap<Table, { keys: string[]; sql: string; orIgnore: string }>()

/** The table's column property names and its INSERT under the SQL names (built once per table). */
function insertOf(table: Table) {
  let ins = inserts.get(table)
  if (!ins) {
    const entries = Object.entries(getTableColumns(table))
    const names = entries.map(([, col]) => col.name)
    const into = `INTO ${getTableName(table)} (${names.join(', ')})
      VALUES (${names.map(() => '?').join(', ')})`
    ins = {
      keys: entries.map(([k]) => k),
      sql: `INSERT ${into}`,
      orIgnore: `INSERT OR IGNORE ${into}`,
    }
    inserts.set(table, ins)
  }
  return ins
}

/**
 * Inserts a whole row keyed by the table's property names (`$inferSelect`: a renamed or missing
 * column fails to compile) under its SQL names, for a hot path where drizzle's builder would cost
 * a query build per row. `orIgnore`: `INSERT OR IGNORE`, which skips a row any unique constraint
 * refuses, not only the key (drizzle's `onConflictDoNothing` names one target). True when a row
 * was inserted.
 */
export function insertValues<T extends Table>(
  db: Db,
  table: T,
  row: T['$inferSelect'],
  opts: { orIgnore?: boolean } = {},
): boolean {
  const ins = insertOf(table)
  const values = ins.keys.map((k) => (row as Record<string, SQLQueryBindings>)[k] ?? null)
  // The same text each time: bun:sqlite keeps the prepared statement.
  return db.sqlite.query(opts.orIgnore ? ins.orIgnore : ins.sql).run(...values).changes > 0
}
