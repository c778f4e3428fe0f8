import { type Column, getTableColumns, getTableName, type SQL, sql, type Table } from 'drizzle-orm'

/** The property names of a drizzle table's columns (`tenantId`, not `tenant_id`). */
export type ColumnKey<T extends Table> = keyof T['_']['columns'] & string

/** A column's SQL name, read from the drizzle table, so a renamed column fails to compile. */
export function columnOf<T extends Table>(table: T, key: ColumnKey<T>): string {
  return (getTableColumns(table) as Record<string, { name: string }>)[key]!.name
}

/**
 * A select list for hand-written SQL on a measured hot path (`tenant_id AS tenantId, …`): the
 * rows come back under the table's property names, typed by a Pick of `$inferSelect`, and the SQL
 * names come from the table, so neither can drift from it.
 *
 * @example
 * const sql = `SELECT ${selectList(webhookDeliveries, ['id', 'tenantId'])} FROM webhook_deliveries`
 * db.sqlite.query<Pick<typeof webhookDeliveries.$inferSelect, 'id' | 'tenantId'>, []>(sql)
 */
export function selectList<T extends Table>(table: T, keys: readonly ColumnKey<T>[]): string {
  return keys
    .map((key) => {
      const name = columnOf(table, key)
      return name === key ? name : `${name} AS ${key}`
    })
    .join(', ')
}

/** A table's SQL names by property, and the table's own under `$` (see `sqlNames`). */
export type SqlNames<T extends Table> = { readonly [K in ColumnKey<T>]: string } & {
  readonly $: string
}

/**
 * The SQL names of a table and its columns, read once from the drizzle table, for hand-written SQL
 * on a measured hot path or an aggregation drizzle's builder does not express: a renamed column
 * property (or one the table lacks) fails to compile, and a renamed SQL name follows by itself.
 *
 * @example
 * const d = sqlNames(webhookDeliveries)
 * const DUE = `SELECT rowid FROM ${d.$} WHERE ${d.endpointId} = ? AND ${d.nextAttemptAt} <= ?`
 */
export function sqlNames<T extends Table>(table: T): SqlNames<T> {
  const names: Record<string, string> = { $: getTableName(table) }
  for (const [key, column] of Object.entries(getTableColumns(table))) names[key] = column.name
  return names as SqlNames<T>
}

/**
 * The value an upsert tried to insert into `column` (`excluded.<name>`), for drizzle's
 * `onConflictDoUpdate({ set: { balance: excluded(t.balance) } })`.
 */
export function excluded(column: Column): SQL {
  return sql`excluded.${sql.identifier(column.name)}`
}
