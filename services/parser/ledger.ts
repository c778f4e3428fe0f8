import {
  isInvoicePayment,
  ledgerKey,
  type TopicEvent,
  type TransactionEvent,
  topics,
} from '../../schema/events.ts'
import type { Kind } from '../../schema/vocabulary.ts'
import type { ServiceContext } from '../kernel/context.ts'
import type { Db } from '../kernel/db.ts'
import { emitEvent, handleOnce } from '../kernel/events.ts'
import { centsOf } from '../kernel/money.ts'
import { subscribe } from '../kernel/subscribe.ts'

export const CONSUMER = 'parser'

const REPORT = `INSERT OR IGNORE INTO receipt_reports (tenant_id, receipt_number, source)
  VALUES (?, ?, ?)`
const OWNER = `SELECT id, source FROM transactions
  WHERE tenant_id = ? AND receipt_number = ? AND leg = ?`
const INSERT_PAYMENT = `INSERT OR IGNORE INTO transactions (tenant_id, id, receipt_number,
  occurred_at, amount, direction, counterparty_name, counterparty_phone, description, balance,
  kind, source, user_id, import_id, created_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'payment', ?, NULL, ?)`

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
    .query<{ id: string; source: string }, [string, string, string]>(OWNER)
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
    const fresh = db.sqlite
      .query(INSERT_PAYMENT)
      .run(
        tenantId,
        t.transaction_id,
        receipt,
        t.occurred_at,
        centsOf(t.amount),
        t.direction,
        t.counterparty_name ?? null,
        t.counterparty_phone ?? null,
        t.description,
        t.balance == null ? null : centsOf(t.balance),
        t.kind ?? paymentKind(t),
        t.user_id ?? null,
        ctx.clock.now().toISOString(),
      )
    if (fresh.changes === 0) {
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
