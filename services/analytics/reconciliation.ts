import type { Db } from '../kernel/db.ts'
import { toMajor } from '../kernel/money.ts'
import type { Range } from './range.ts'

/** Items listed per kind at most; `count` stays exact. */
export const RECONCILIATION_LIST_MAX = 500

interface Report {
  receipt_number: string
  source: string
  channel: string | null
  transaction_id: string
  occurred_at: string
  amount_cents: number
  direction: 'in' | 'out'
  balance_cents: number | null
  import_id: string | null
}

const signed = (r: { amount_cents: number; direction: string }) =>
  r.direction === 'in' ? r.amount_cents : -r.amount_cents

/**
 * receipt_reports holds each entry's `ledgerKey` (receipt, or receipt/leg): an item names the
 * receipt and its leg apart, as the transactions list does.
 */
const itemOf = (r: Report) => {
  const slash = r.receipt_number.lastIndexOf('/')
  return slash < 0
    ? itemWith(r, r.receipt_number, '')
    : itemWith(r, r.receipt_number.slice(0, slash), r.receipt_number.slice(slash + 1))
}

const itemWith = (r: Report, receipt: string, leg: string) => ({
  receipt_number: receipt,
  leg,
  transaction_id: r.transaction_id,
  source: r.source,
  channel: r.channel,
  occurred_at: r.occurred_at,
  amount: toMajor(r.amount_cents),
  direction: r.direction,
  balance: r.balance_cents === null ? null : toMajor(r.balance_cents),
})

function listOf<T>(all: T[]) {
  return { count: all.length, data: all.slice(0, RECONCILIATION_LIST_MAX) }
}

/**
 * The imported statement against what the live channels (payments, SMS, API rows: every source but
 * the statement) reported, over the part of `range` the statement covers (its first to its last row
 * there): live receipts the statement lacks, statement rows no live channel reported, receipts whose
 * amount or direction disagree, and the statement's closing balance against the opening balance
 * plus the ledger's net over the same span. Read only: nothing is alerted.
 */
export function reconcileStatement(s: { db: Db; tenantId: string; range: Range }) {
  const sqlite = s.db.sqlite
  const from = s.range.fromMs === null ? '' : new Date(s.range.fromMs).toISOString()
  const to = s.range.toMs === null ? '\uffff' : new Date(s.range.toMs).toISOString()
  const statement = sqlite
    .query<Report, [string, string, string]>(
      `SELECT * FROM receipt_reports WHERE tenant_id = ? AND source = 'statement'
       AND occurred_at >= ? AND occurred_at < ? ORDER BY occurred_at, receipt_number`,
    )
    .all(s.tenantId, from, to)
  if (statement.length === 0) {
    return {
      period: null,
      statement_rows: 0,
      missing_from_statement: listOf([]),
      not_reported_live: listOf([]),
      amount_mismatches: listOf([]),
      balance: null,
    }
  }
  const first = statement[0]!
  const last = statement.at(-1)!
  const othersOf = sqlite.query<Report, [string, string]>(
    `SELECT * FROM receipt_reports WHERE tenant_id = ? AND receipt_number = ?
     AND source != 'statement' ORDER BY source`,
  )
  const notLive: Report[] = []
  const mismatches: Array<ReturnType<typeof itemOf> & { reported: ReturnType<typeof itemOf>[] }> =
    []
  for (const row of statement) {
    const others = othersOf.all(s.tenantId, row.receipt_number)
    if (others.length === 0) {
      notLive.push(row)
      continue
    }
    const differ = others.filter((o) => signed(o) !== signed(row))
    if (differ.length > 0) mismatches.push({ ...itemOf(row), reported: differ.map(itemOf) })
  }
  const missing = sqlite
    .query<Report, [string, string, string, string]>(
      `SELECT r.* FROM receipt_reports r WHERE r.tenant_id = ? AND r.source != 'statement'
       AND r.occurred_at >= ? AND r.occurred_at <= ? AND NOT EXISTS (SELECT 1 FROM receipt_reports s
         WHERE s.tenant_id = ? AND s.receipt_number = r.receipt_number AND s.source = 'statement')
       ORDER BY r.occurred_at, r.receipt_number`,
    )
    .all(s.tenantId, first.occurred_at, last.occurred_at, s.tenantId)
  return {
    period: { from: first.occurred_at, to: last.occurred_at },
    statement_rows: statement.length,
    missing_from_statement: listOf(missing.map(itemOf)),
    not_reported_live: listOf(notLive.map(itemOf)),
    amount_mismatches: listOf(mismatches),
    balance: balanceOf(s.db, { tenantId: s.tenantId, first, last, statement }),
  }
}

/**
 * The statement's opening balance (its first row's balance before that row) plus the net of every
 * ledger transaction from its first row to its last, against the closing balance it prints.
 */
/**
 * The platform's running balance over the statement's period: the statement's opening balance
 * plus every ledger transaction in that period. A transaction the statement also lists counts
 * whatever time the ledger holds for it: the first report's time (a payment's) can fall a moment
 * before the statement's printed time.
 */
function balanceOf(
  db: Db,
  {
    tenantId,
    first,
    last,
    statement,
  }: { tenantId: string; first: Report; last: Report; statement: readonly Report[] },
) {
  if (first.balance_cents === null || last.balance_cents === null) return null
  const opening = first.balance_cents - signed(first)
  const listed = JSON.stringify(statement.map((r) => r.transaction_id))
  const net =
    db.sqlite
      .query<{ net: number | null }, [string, string, string, string]>(
        `SELECT sum(CASE direction WHEN 'in' THEN amount_cents ELSE -amount_cents END) AS net
         FROM transactions WHERE tenant_id = ?
           AND ((occurred_at >= ? AND occurred_at <= ?) OR id IN (SELECT value FROM json_each(?)))`,
      )
      .get(tenantId, first.occurred_at, last.occurred_at, listed)?.net ?? 0
  const running = opening + net
  return {
    opening: toMajor(opening),
    statement_closing: toMajor(last.balance_cents),
    platform_running: toMajor(running),
    difference: toMajor(running - last.balance_cents),
  }
}
