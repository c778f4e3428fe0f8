import {
  isInvoicePayment,
  ledgerKey,
  type TopicEvent,
  type TransactionEvent,
  topics,
} from '../../schema/events.ts'
import { receiptReports, transactions } from '../../schema/parser/tables.ts'
import type { Kind } from '../../schema/vocabulary.ts'
import { selectList, sqlNames } from '../kernel/columns.ts'
import type { ServiceContext } from '../kernel/context.ts'
import type { Db } from '../kernel/db.ts'
import { emitEvent, handleOnce } from '../kernel/events.ts'
import { centsOf } from '../kernel/money.ts'
import { subscribe } from '../kernel/subscribe.ts'

export const CONSUMER = 'parser'

/** Asked for every duplicate row of an import (bench/ingest.ts): names from the tables. */
const tx = sqlNames(transactions)
const rr = sqlNames(receiptReports)
const REPORT = `INSERT OR IGNORE INTO ${rr.$} (${rr.tenantId}, ${rr.receiptNumber}, ${rr.source})
  VALUES (?, ?, ?)`
const OWNER = `SELECT ${selectList(transactions, ['id', 'source'])} FROM ${tx.$}
  WHERE ${tx.tenantId} = ? AND ${tx.receiptNumber} = ? AND ${tx.leg} = ?`

/** Notes that `source` reported `receipt`; true when it had not before. */
function recordReport(db: Db, tenantId: string, receipt: string, source: string): boolean {
  return db.sqlite.query(REPORT).run(tenantId, receipt, source).changes === 1
}

/**
 * A receipt already stored, now reported again: the id of the transaction it enriches when another
 * channel reported it first, or null when this channel had reported it already (a plain duplicate:
 * the same file twice). The stored row's own source is its first report, so only later channels
 * take a row in receipt_reports and the 100,000-row path stays one insert per row.
 */
export function matchReport(
  db: Db,
  report: { tenantId: string; receipt: string; source: string; leg?: string },
): string | null {
  const { tenantId, receipt, source, leg = '' } = report
  const owner = db.sqlite
    .query<Pick<typeof transactions.$inferSelect, 'id' | 'source'>, [string, string, string]>(OWNER)
    .get(tenantId, receipt, leg)
  if (!owner || owner.source === source) return null
  return recordReport(db, tenantId, ledgerKey(receipt, leg), source) ? owner.id : null
}

/**
 * Payments enter the receipt index too, so a statement or SMS reporting the same receipt later is
 * a duplicate and not a second transaction. A payment the parser had not seen is metered here
 * (`transactions` usage, once per ledger transaction whatever reported it first); nothing is
 * published on `transactions.raw` for it, since the categorizer consumes the payment itself.
 */
export function recordPayment(
  ctx: ServiceContext,
  event: TopicEvent<typeof topics.transactionsSuccess>,
): void {
  const t = event.data
  const receipt = t.receipt_number?.trim()
  // The platform's own invoice is billing's business, not a transaction of the tenant's ledger.
  if (!receipt || isInvoicePayment(t)) return
  const tenantId = event.tenant_id
  const db = ctx.registry.tenant('parser', tenantId)
  handleOnce(db, CONSUMER, event.id, () => {
    const fresh = db.orm
      .insert(transactions)
      .values({
        tenantId,
        id: t.transaction_id,
        receiptNumber: receipt,
        occurredAt: t.occurred_at,
        amount: centsOf(t.amount),
        direction: t.direction,
        counterpartyName: t.counterparty_name ?? null,
        counterpartyPhone: t.counterparty_phone ?? null,
        description: t.description,
        balance: t.balance == null ? null : centsOf(t.balance),
        kind: t.kind ?? paymentKind(t),
        source: 'payment',
        userId: t.user_id ?? null,
        importId: null,
        createdAt: ctx.clock.now().toISOString(),
      })
      .onConflictDoNothing()
      .returning({ id: transactions.id })
      .get()
    if (!fresh) {
      matchReport(db, { tenantId, receipt, source: 'payment' })
      return
    }
    emitEvent(
      db,
      { topic: topics.usage, tenantId, data: { metric: 'transactions', quantity: 1 } },
      ctx.clock,
    )
  })
}

/** The kind of a payment the payment service reported, from its channel and direction. */
export function paymentKind(t: TransactionEvent): Kind {
  if (t.channel === 'reversal') return 'reversal'
  return t.direction === 'in' ? 'customer_payment' : 'supplier_payment'
}

export async function subscribeLedger(ctx: ServiceContext): Promise<void> {
  await subscribe(ctx, CONSUMER, topics.transactionsSuccess, (event) => recordPayment(ctx, event))
}
