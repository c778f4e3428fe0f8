import { and, eq, gte, lt, lte, ne, notExists, or, sql } from 'drizzle-orm'
import { alias } from 'drizzle-orm/sqlite-core'
import { receiptReports as rr, transactions } from '../../schema/analytics/tables.ts'
import type { Db } from '../kernel/db.ts'
import { toMajor } from '../kernel/money.ts'
import type { Range } from './range.ts'

/** The source a statement import's reports carry. */
const STATEMENT = 'statement'

/** Items listed per kind at most; `count` stays exact. */
export const RECONCILIATION_LIST_MAX = 500

/** A channel's report of a ledger entry, as receipt_reports holds it. */
type Report = Omit<typeof rr.$inferSelect, 'direction'> & { direction: 'in' | 'out' }

const signed = (r: Pick<Report, 'amountCents' | 'direction'>) =>
  r.direction === 'in' ? r.amountCents : -r.amountCents

/**
 * receipt_reports holds each entry's `ledgerKey` (receipt, or receipt/leg): an item names the
 * receipt and its leg apart, as the transactions list does.
 */
const itemOf = (r: Report) => {
  const slash = r.receiptNumber.lastIndexOf('/')
  return slash < 0
    ? itemWith(r, r.receiptNumber, '')
    : itemWith(r, r.receiptNumber.slice(0, slash), r.receiptNumber.slice(slash + 1))
}

const itemWith = (r: Report, receipt: string, leg: string) => ({
  receipt_number: receipt,
  leg,
  transaction_id: r.transactionId,
  source: r.source,
  channel: r.channel,
  occurred_at: r.occurredAt,
  amount: toMajor(r.amountCents),
  direction: r.direction,
  balance: r.balanceCents === null ? null : toMajor(r.balanceCents),
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
  const orm = s.db.orm
  const from = s.range.fromMs === null ? '' : new Date(s.range.fromMs).toISOString()
  const to = s.range.toMs === null ? '\uffff' : new Date(s.range.toMs).toISOString()
  const statement = orm
    .select()
    .from(rr)
    .where(
      and(
        eq(rr.tenantId, s.tenantId),
        eq(rr.source, STATEMENT),
        gte(rr.occurredAt, from),
        lt(rr.occurredAt, to),
      ),
    )
    .orderBy(rr.occurredAt, rr.receiptNumber)
    .all() as Report[]
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
  const othersOf = orm
    .select()
    .from(rr)
    .where(
      and(
        eq(rr.tenantId, s.tenantId),
        eq(rr.receiptNumber, sql.placeholder('receipt')),
        ne(rr.source, STATEMENT),
      ),
    )
    .orderBy(rr.source)
    .prepare()
  const notLive: Report[] = []
  const mismatches: Array<ReturnType<typeof itemOf> & { reported: ReturnType<typeof itemOf>[] }> =
    []
  for (const row of statement) {
    const others = othersOf.all({ receipt: row.receiptNumber }) as Report[]
    if (others.length === 0) {
      notLive.push(row)
      continue
    }
    const differ = others.filter((o) => signed(o) !== signed(row))
    if (differ.length > 0) mismatches.push({ ...itemOf(row), reported: differ.map(itemOf) })
  }
  const listed = alias(rr, 's')
  const missing = orm
    .select()
    .from(rr)
    .where(
      and(
        eq(rr.tenantId, s.tenantId),
        ne(rr.source, STATEMENT),
        gte(rr.occurredAt, first.occurredAt),
        lte(rr.occurredAt, last.occurredAt),
        notExists(
          orm
            .select({ one: sql`1` })
            .from(listed)
            .where(
              and(
                eq(listed.tenantId, s.tenantId),
                eq(listed.receiptNumber, rr.receiptNumber),
                eq(listed.source, STATEMENT),
              ),
            ),
        ),
      ),
    )
    .orderBy(rr.occurredAt, rr.receiptNumber)
    .all() as Report[]
  return {
    period: { from: first.occurredAt, to: last.occurredAt },
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
  if (first.balanceCents === null || last.balanceCents === null) return null
  const opening = first.balanceCents - signed(first)
  const listed = JSON.stringify(statement.map((r) => r.transactionId))
  const t = transactions
  const row = db.orm
    .select({
      net: sql<
        number | null
      >`sum(CASE ${t.direction} WHEN 'in' THEN ${t.amountCents} ELSE -${t.amountCents} END)`,
    })
    .from(t)
    .where(
      and(
        eq(t.tenantId, tenantId),
        or(
          and(gte(t.occurredAt, first.occurredAt), lte(t.occurredAt, last.occurredAt)),
          sql`${t.id} IN (SELECT value FROM json_each(${listed}))`,
        ),
      ),
    )
    .get()
  const net = row?.net ?? 0
  const running = opening + net
  return {
    opening: toMajor(opening),
    statement_closing: toMajor(last.balanceCents),
    platform_running: toMajor(running),
    difference: toMajor(running - last.balanceCents),
  }
}
