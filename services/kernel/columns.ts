import { getTableColumns, type Table } from 'drizzle-orm'

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
