import { getTableConfig } from 'drizzle-orm/sqlite-core'
import { transactions } from '../../schema/analytics/tables.ts'
import { type ColumnKey, sqlNames } from '../kernel/columns.ts'
import type { Db } from '../kernel/db.ts'
import { preparedPerDb } from '../kernel/prepared.ts'
import type { StoredTransaction } from './stored.ts'

/** The transactions table's SQL names (`${tx.$}`, `${tx.occurredAt}`), for hand-written SQL. */
export const tx = sqlNames(transactions)

type StoredKey = Exclude<ColumnKey<typeof transactions>, 'updatedAt'>

/** A stored row's field: the column's property name in snake_case (StoredTransaction's keys). */
export type StoredField = Exclude<keyof StoredTransaction, 'reports'>

/**
 * The columns a StoredTransaction holds, in the order the ingest writes them (tenant and id
 * first). Every column but `updatedAt`, each once: the table decides, so one added or renamed
 * there fails to compile here.
 */
const IN_ORDER = {
  tenantId: true,
  id: true,
  userId: true,
  occurredAt: true,
  localDay: true,
  amountCents: true,
  direction: true,
  counterpartyName: true,
  counterpartyPhone: true,
  counterpartyKey: true,
  description: true,
  receiptNumber: true,
  balanceCents: true,
  category: true,
  categoryConfidence: true,
  categorySource: true,
  ruleId: true,
  source: true,
  kind: true,
  leg: true,
} satisfies Record<StoredKey, true>

const KEYS = Object.keys(IN_ORDER) as StoredKey[]

const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

/** StoredTransaction's fields in the ingest's column order (STORED_COLUMNS'). */
export const STORED_FIELDS = KEYS.map(snake) as StoredField[]

/** The SQL names of the stored columns, in STORED_FIELDS order. */
export const STORED_COLUMNS = KEYS.map((k) => tx[k])

/** A select list that reads a StoredTransaction: each column under its field's name. */
export const STORED_SELECT = KEYS.map((k, i) =>
  tx[k] === STORED_FIELDS[i] ? tx[k] : `${tx[k]} AS ${STORED_FIELDS[i]}`,
).join(', ')

const statementsOf = preparedPerDb({
  stored: `SELECT ${STORED_SELECT} FROM ${tx.$} WHERE ${tx.tenantId} = ? AND ${tx.id} = ?`,
})

/** One stored transaction of the tenant, or null. */
export function readStored(db: Db, tenantId: string, id: string): StoredTransaction | null {
  return statementsOf(db).stored.get(tenantId, id) as StoredTransaction | null
}

/** `isTradingParty` in SQL, for reads of the rows themselves (edge days, scope=me). */
export const TRADING_SQL = `${tx.kind} IN ('customer_payment', 'supplier_payment')`

/**
 * The name of the transactions' (tenant, time, id) index, read from the table, for reads that
 * must seek by time (`INDEXED BY`).
 */
export const TIME_INDEX = getTableConfig(transactions).indexes.find(
  (i) => i.config.columns[1] === transactions.occurredAt,
)!.config.name

/** The time index's keyset, a row's (time, id): pages and slices go newest first by it. */
export const KEYSET = `(${tx.occurredAt}, ${tx.id})`

/** Newest first, ties broken by id: the order of the list, the export and their keysets. */
export const NEWEST_FIRST = `ORDER BY ${tx.occurredAt} DESC, ${tx.id} DESC`

/** The read-back fields (DESIGN §11) in VIEW_FIELDS order; `id` and `occurred_at` lead (keyset). */
export const EXPORT_SELECT = `SELECT ${[
  tx.id,
  tx.occurredAt,
  tx.amountCents,
  tx.direction,
  tx.counterpartyName,
  tx.counterpartyPhone,
  tx.description,
  tx.receiptNumber,
  tx.balanceCents,
  tx.category,
  tx.categoryConfidence,
  tx.categorySource,
  tx.source,
  tx.userId,
  tx.kind,
  tx.leg,
].join(', ')} FROM ${tx.$} INDEXED BY ${TIME_INDEX}`
