import { eq, isNull, or, sql } from 'drizzle-orm'
import { cashflowDaily, cashflowState, cashflowTransactions } from '../../schema/cashflow/tables.ts'
import type { TransactionEvent } from '../../schema/events.ts'
import { excluded, selectList, sqlNames } from '../kernel/columns.ts'
import type { Db } from '../kernel/db.ts'
import { dayIn } from '../kernel/time-zone.ts'
import { type BalanceRow, closingBalance } from './closing-balance.ts'
import { kindOfTransaction } from './kinds.ts'

type TransactionRow = typeof cashflowTransactions.$inferSelect
/** What a transaction added to the daily series (`kind` '' for one stored without a kind). */
type StoredTransaction = Pick<TransactionRow, 'day' | 'direction' | 'category' | 'amount'> & {
  kind: string
}

/**
 * The statements of every ingested transaction (bench/ingest.ts, bench/cashflow.ts measure them):
 * prepared once per batch, each name taken from the tables.
 */
const tx = sqlNames(cashflowTransactions)
const daily = sqlNames(cashflowDaily)
const FIND = `SELECT ${selectList(cashflowTransactions, ['day', 'direction', 'category', 'amount'])},
  coalesce(${tx.kind}, '') AS kind FROM ${tx.$} WHERE ${tx.tenantId} = ? AND ${tx.id} = ?`
const UPSERT_TXN = `INSERT INTO ${tx.$} (${tx.tenantId}, ${tx.id}, ${tx.day}, ${tx.occurredAt},
    ${tx.direction}, ${tx.category}, ${tx.amount}, ${tx.balance}, ${tx.counterparty}, ${tx.kind})
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (${tx.tenantId}, ${tx.id}) DO UPDATE SET ${tx.day} = excluded.${tx.day},
    ${tx.occurredAt} = excluded.${tx.occurredAt}, ${tx.direction} = excluded.${tx.direction},
    ${tx.category} = excluded.${tx.category}, ${tx.amount} = excluded.${tx.amount},
    ${tx.balance} = coalesce(excluded.${tx.balance}, ${tx.balance}),
    ${tx.counterparty} = coalesce(excluded.${tx.counterparty}, ${tx.counterparty}),
    ${tx.kind} = excluded.${tx.kind}`
const ADD_DAILY = `INSERT INTO ${daily.$} (${daily.tenantId}, ${daily.day}, ${daily.category},
    ${daily.kind}, ${daily.inflow}, ${daily.outflow}, ${daily.count})
  VALUES (?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (${daily.tenantId}, ${daily.day}, ${daily.category}, ${daily.kind}) DO UPDATE SET
    ${daily.inflow} = ${daily.inflow} + excluded.${daily.inflow},
    ${daily.outflow} = ${daily.outflow} + excluded.${daily.outflow},
    ${daily.count} = ${daily.count} + excluded.${daily.count}`
const DROP_EMPTY = `DELETE FROM ${daily.$} WHERE ${daily.tenantId} = ? AND ${daily.day} = ?
  AND ${daily.category} = ? AND ${daily.kind} = ? AND ${daily.count} <= 0`

/** The sane window of DESIGN §16: no movement before 2007 (M-Pesa's launch) or over a day ahead. */
export const SANE_FIRST_MS = Date.UTC(2007, 0, 1)
const DAY_MS = 86_400_000

const cents = (value: number) => Math.round(value * 100)

/**
 * Applies one categorized batch to the tenant's daily series. Call inside the inbox transaction
 * (`handleOnce`). A transaction id seen before is a re-categorization (or correction): its old
 * contribution is taken out of the series and the new one put in, so amounts move between
 * categories and nothing is counted twice.
 */
export function applyTransactions(
  db: Db,
  {
    tenantId,
    timeZone,
    transactions,
    now,
  }: { tenantId: string; timeZone: string; transactions: readonly TransactionEvent[]; now: Date },
): void {
  const sqlite = db.sqlite
  const find = sqlite.query<StoredTransaction, [string, string]>(FIND)
  const upsertTxn = sqlite.query(UPSERT_TXN)
  const addDaily = sqlite.query(ADD_DAILY)
  const dropEmpty = sqlite.query(DROP_EMPTY)

  const balances: BalanceRow[] = []
  const latestSaneMs = now.getTime() + DAY_MS
  for (const txn of transactions) {
    const occurredMs = Date.parse(txn.occurred_at)
    if (!Number.isFinite(occurredMs) || !Number.isFinite(txn.amount)) continue
    // The doors refuse these; one that slipped through would stretch every series and forecast
    // over decades (two rows dated 1970 and 2099 once made each forecast take 0.8 s).
    if (occurredMs < SANE_FIRST_MS || occurredMs > latestSaneMs) continue
    const amount = Math.abs(cents(txn.amount))
    const direction = txn.direction === 'in' ? 'in' : 'out'
    const category = txn.category?.trim() || 'uncategorized'
    const kind = kindOfTransaction(txn)
    const day = dayIn(timeZone, new Date(occurredMs))
    const previous = find.get(tenantId, txn.transaction_id)
    const changed =
      !previous ||
      previous.day !== day ||
      previous.direction !== direction ||
      previous.category !== category ||
      previous.kind !== kind ||
      previous.amount !== amount
    if (previous && changed) {
      const inflow = previous.direction === 'in' ? -previous.amount : 0
      const outflow = previous.direction === 'out' ? -previous.amount : 0
      addDaily.run(tenantId, previous.day, previous.category, previous.kind, inflow, outflow, -1)
      dropEmpty.run(tenantId, previous.day, previous.category, previous.kind)
    }
    if (changed) {
      const inflow = direction === 'in' ? amount : 0
      addDaily.run(tenantId, day, category, kind, inflow, direction === 'out' ? amount : 0, 1)
    }
    const balance = txn.balance == null || !Number.isFinite(txn.balance) ? null : cents(txn.balance)
    const counterparty = counterpartyKey(txn)
    upsertTxn.run(
      tenantId,
      txn.transaction_id,
      day,
      new Date(occurredMs).toISOString(),
      direction,
      category,
      amount,
      balance,
      counterparty,
      kind || null,
    )
    if (balance !== null)
      balances.push({ ms: occurredMs, move: direction === 'in' ? amount : -amount, balance })
  }
  if (balances.length === 0) return
  const known = db.orm
    .select({ balance: cashflowState.balance, balanceAt: cashflowState.balanceAt })
    .from(cashflowState)
    .where(eq(cashflowState.tenantId, tenantId))
    .get()
  const before =
    known?.balance != null && known.balanceAt
      ? { ms: Date.parse(known.balanceAt), balance: known.balance }
      : null
  const latest = closingBalance(balances, before)
  if (latest)
    recordBalance(db, {
      tenantId,
      balance: latest.balance,
      at: new Date(latest.ms).toISOString(),
      now,
    })
}

/** Keeps the balance of the latest transaction that carried one (later occurred_at wins). */
export function recordBalance(
  db: Db,
  { tenantId, balance, at, now }: { tenantId: string; balance: number; at: string; now: Date },
): void {
  const t = cashflowState
  db.orm
    .insert(t)
    .values({ tenantId, balance, balanceAt: at, updatedAt: now.toISOString() })
    .onConflictDoUpdate({
      target: t.tenantId,
      set: {
        balance: excluded(t.balance),
        balanceAt: excluded(t.balanceAt),
        updatedAt: excluded(t.updatedAt),
      },
      setWhere: or(isNull(t.balanceAt), sql`${excluded(t.balanceAt)} >= ${t.balanceAt}`),
    })
    .run()
}

/**
 * Who a transaction is with, for recurring-payment detection: the name, else the phone, else the
 * description without its digits (receipt numbers, dates).
 */
function counterpartyKey(txn: TransactionEvent): string | null {
  const name = txn.counterparty_name?.trim()
  if (name) return name
  const phone = txn.counterparty_phone?.trim()
  if (phone) return phone
  const text = txn.description
    .toLowerCase()
    .replace(/[0-9]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 80)
  return text || null
}
