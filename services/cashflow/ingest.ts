import type { TransactionEvent } from '../../schema/events.ts'
import type { Db } from '../kernel/db.ts'
import { dayIn } from '../kernel/time-zone.ts'
import { type BalanceRow, closingBalance } from './closing-balance.ts'
import { kindOfTransaction } from './kinds.ts'

interface StoredTransaction {
  day: string
  direction: string
  category: string
  kind: string
  amount: number
}

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
  const find = sqlite.query<StoredTransaction, [string, string]>(
    `SELECT day, direction, category, coalesce(kind, '') AS kind, amount FROM cashflow_transactions
     WHERE tenant_id = ? AND id = ?`,
  )
  const upsertTxn = sqlite.query(
    `INSERT INTO cashflow_transactions
       (tenant_id, id, day, occurred_at, direction, category, amount, balance, counterparty, kind)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (tenant_id, id) DO UPDATE SET day = excluded.day,
       occurred_at = excluded.occurred_at, direction = excluded.direction,
       category = excluded.category, amount = excluded.amount,
       balance = coalesce(excluded.balance, balance),
       counterparty = coalesce(excluded.counterparty, counterparty), kind = excluded.kind`,
  )
  const addDaily = sqlite.query(
    `INSERT INTO cashflow_daily (tenant_id, day, category, kind, inflow, outflow, count)
     VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (tenant_id, day, category, kind) DO UPDATE SET inflow = inflow + excluded.inflow,
       outflow = outflow + excluded.outflow, count = count + excluded.count`,
  )
  const dropEmpty = sqlite.query(
    `DELETE FROM cashflow_daily
     WHERE tenant_id = ? AND day = ? AND category = ? AND kind = ? AND count <= 0`,
  )

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
  const known = sqlite
    .query<{ balance: number | null; balance_at: string | null }, [string]>(
      'SELECT balance, balance_at FROM cashflow_state WHERE tenant_id = ?',
    )
    .get(tenantId)
  const before =
    known?.balance != null && known.balance_at
      ? { ms: Date.parse(known.balance_at), balance: known.balance }
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
  db.sqlite
    .query(
      `INSERT INTO cashflow_state (tenant_id, balance, balance_at, updated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (tenant_id) DO UPDATE SET balance = excluded.balance,
         balance_at = excluded.balance_at, updated_at = excluded.updated_at
       WHERE balance_at IS NULL OR excluded.balance_at >= balance_at`,
    )
    .run(tenantId, balance, at, now.toISOString())
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
