import type { SQLQueryBindings } from 'bun:sqlite'
import { getTableColumns, getTableName, type Table } from 'drizzle-orm'
import { type ColumnKey, selectList } from '../kernel/columns.ts'
import type { Db } from '../kernel/db.ts'

type Columns<T extends Table> = T['_']['columns']

/**
 * A drizzle table's row as raw SQL (`SELECT *`) returns it: keyed by each column's SQL name and
 * typed by the column (nullable unless `notNull`), so renaming a column fails to compile wherever
 * the row is read. Narrow text columns holding an enum with `Narrow`.
 *
 * @example
 * type PaymentRow = Narrow<SqlRow<typeof payments>, { status: PaymentStatus }>
 */
export type SqlRow<T extends Table> = {
  [K in keyof Columns<T> as Columns<T>[K]['_']['name']]: Columns<T>[K]['_']['notNull'] extends true
    ? Columns<T>[K]['_']['data']
    : Columns<T>[K]['_']['data'] | null
}

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

const columns = new WeakMap<Table, { keys: string[]; names: string[] }>()

/** The table's column property names and SQL names, in declaration order (read once per table). */
function columnsOf(table: Table) {
  let c = columns.get(table)
  if (!c) {
    const entries = Object.entries(getTableColumns(table))
    c = { keys: entries.map(([k]) => k), names: entries.map(([, col]) => col.name) }
    columns.set(table, c)
  }
  return c
}

type Conflict = { onConflict?: 'ignore' | 'replace' }

/** One whole row's INSERT under the table's own column names; true when a row was inserted. */
function insertWith(db: Db, table: Table, values: SQLQueryBindings[], opts: Conflict): boolean {
  const { names } = columnsOf(table)
  const verb = opts.onConflict ? `INSERT OR ${opts.onConflict.toUpperCase()}` : 'INSERT'
  // The same text each time: bun:sqlite keeps the prepared statement.
  const sql = `${verb} INTO ${getTableName(table)} (${names.join(', ')}) VALUES (${names.map(() => '?').join(', ')})`
  return db.sqlite.query(sql).run(...values).changes > 0
}

/**
 * Inserts a whole row under the table's own column names (so a rename fails to compile here, not
 * at run time); `onConflict` 'ignore' or 'replace': `INSERT OR IGNORE` / `INSERT OR REPLACE`.
 * True when a row was inserted.
 */
export function insertRow<T extends Table>(
  db: Db,
  table: T,
  row: SqlRow<T>,
  opts: Conflict = {},
): boolean {
  const values = columnsOf(table).names.map(
    (n) => (row as Record<string, SQLQueryBindings>)[n] ?? null,
  )
  return insertWith(db, table, values, opts)
}

/**
 * `insertRow` for a row keyed by the table's property names (`$inferSelect`), for a hot path
 * where drizzle's builder would cost a query build per row.
 */
export function insertValues<T extends Table>(
  db: Db,
  table: T,
  row: T['$inferSelect'],
  opts: Conflict = {},
): boolean {
  const values = columnsOf(table).keys.map(
    (k) => (row as Record<string, SQLQueryBindings>)[k] ?? null,
  )
  return insertWith(db, table, values, opts)
}
