import { and, eq, ne } from 'drizzle-orm'
import { receiptReports, transactions } from '../../schema/analytics/tables.ts'
import { sqlNames } from '../kernel/columns.ts'
import type { Db } from '../kernel/db.ts'
import { centsOf } from '../kernel/money.ts'
import { addToRollups, refreshCounterparty } from './rollups.ts'
import { entryKey, type StoredTransaction } from './stored.ts'
import { readStored } from './stored-sql.ts'

const rr = sqlNames(receiptReports)

const HOLDER = `SELECT ${rr.transactionId} AS id FROM ${rr.$}
  WHERE ${rr.tenantId} = ? AND ${rr.receiptNumber} = ? LIMIT 1`
export const UPSERT_HEAD = `INSERT INTO ${rr.$} (${rr.tenantId}, ${rr.receiptNumber}, ${rr.source},
  ${rr.channel}, ${rr.transactionId}, ${rr.occurredAt}, ${rr.amountCents}, ${rr.direction},
  ${rr.balanceCents}, ${rr.importId})`
const replaced = (c: string) => `${c} = excluded.${c}`
/** A report again from the same channel replaces what it said (the import it came in is kept). */
export const UPSERT_TAIL = `ON CONFLICT (${rr.tenantId}, ${rr.receiptNumber}, ${rr.source}) DO UPDATE SET
  ${[rr.channel, rr.transactionId, rr.occurredAt, rr.amountCents, rr.direction, rr.balanceCents]
    .map(replaced)
    .join(', ')},
  ${rr.importId} = coalesce(excluded.${rr.importId}, ${rr.importId})`
const UPSERT = `${UPSERT_HEAD} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ${UPSERT_TAIL}`

/**
 * The transaction that holds a ledger entry in this database, or null. `key` is the entry's
 * `ledgerKey` (receipt, or receipt/leg): what receipt_reports.receipt_number holds.
 */
export function holderOf(db: Db, tenantId: string, key: string): string | null {
  return db.sqlite.query<{ id: string }, [string, string]>(HOLDER).get(tenantId, key)?.id ?? null
}

const HOLDERS = `SELECT ${rr.receiptNumber} AS receipt, ${rr.transactionId} AS id FROM ${rr.$}
  WHERE ${rr.tenantId} = ? AND ${rr.receiptNumber} IN (SELECT value FROM json_each(?))`

/**
 * `holderOf` for many entries in one query (a batch's): key → holder, null when none holds it.
 * The first report in key order answers, as `holderOf`'s LIMIT 1 does.
 */
export function holdersOf(
  db: Db,
  tenantId: string,
  keys: readonly string[],
): Map<string, string | null> {
  const out = new Map<string, string | null>()
  if (keys.length === 0) return out
  const found = db.sqlite
    .query<{ receipt: string; id: string }, [string, string]>(HOLDERS)
    .all(tenantId, JSON.stringify(keys))
  for (const r of found) if (!out.has(r.receipt)) out.set(r.receipt, r.id)
  for (const k of keys) if (!out.has(k)) out.set(k, null)
  return out
}

/**
 * Keeps what each channel reported of the row's ledger entry, all under the transaction `holder`;
 * `moved` when the entry changed hands (a raw copy dropped), so its older reports follow.
 */
export function recordReports(
  db: Db,
  { row, holder, moved = false }: { row: StoredTransaction; holder: string; moved?: boolean },
): void {
  const receipt = entryKey(row)
  if (!receipt) return
  const values: unknown[] = []
  reportValues(row, holder, values)
  const upsert = db.sqlite.query(UPSERT)
  for (let at = 0; at < values.length; at += 10) {
    upsert.run(...(values.slice(at, at + 10) as never[]))
  }
  if (!moved) return
  const t = receiptReports
  db.orm
    .update(t)
    .set({ transactionId: holder })
    .where(
      and(eq(t.tenantId, row.tenant_id), eq(t.receiptNumber, receipt), ne(t.transactionId, holder)),
    )
    .run()
}

/** Appends the UPSERT values (10 a report) of the row's entry's reports, held by `holder`. */
export function reportValues(row: StoredTransaction, holder: string, out: unknown[]): void {
  const receipt = entryKey(row)
  if (!receipt) return
  for (const r of row.reports ?? []) {
    out.push(
      row.tenant_id,
      receipt,
      r.source,
      r.channel ?? null,
      holder,
      // The row's own report says the row's time: toStored made that text already.
      r.occurred_at === row.occurred_at ? row.occurred_at : instant(r.occurred_at),
      centsOf(r.amount),
      r.direction,
      r.balance == null ? null : centsOf(r.balance),
      r.import_id ?? null,
    )
  }
}

/**
 * Takes a provisional copy out: a raw row (never categorized) stored before the categorizer decided
 * that its receipt belongs to another transaction (the two reports raced). Its rollups go with it.
 * False when the holder is categorized: the categorizer published both ids, so both stay.
 */
export function dropCopy(db: Db, tenantId: string, id: string): boolean {
  const old = readStored(db, tenantId, id)
  if (!old) return true
  if (old.category !== null) return false
  addToRollups(db, old, -1)
  db.orm
    .delete(transactions)
    .where(and(eq(transactions.tenantId, tenantId), eq(transactions.id, id)))
    .run()
  refreshCounterparty(db, old)
  return true
}

/** Reports are compared with transactions by time: the same text form (toIsoInstant's). */
function instant(value: string): string {
  const ms = Date.parse(value)
  return Number.isFinite(ms) ? new Date(ms).toISOString() : value
}
