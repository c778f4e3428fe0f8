import { and, desc, eq } from 'drizzle-orm'
import { c2bPayments } from '../../schema/payment/tables.ts'
import { NotFound } from '../kernel/errors.ts'
import { type Actor, tenantFor } from '../kernel/roles.ts'
import { type C2bRow, getC2bPayment } from './c2b-verify.ts'
import type { PaymentDeps } from './deps.ts'

/** A C2B payment as the API shows it: its verification status says whether it counts. */
export const c2bPaymentView = (r: C2bRow) => ({
  id: r.id,
  trans_id: r.transId,
  shortcode: r.shortcode,
  transaction_type: r.transactionType,
  amount: r.amountCents / 100,
  bill_ref_number: r.billRefNumber,
  phone_number: r.msisdn,
  payer_name: r.payerName,
  trans_time: r.transTime,
  third_party_trans_id: r.thirdPartyTransId,
  status: r.status,
  status_reason: r.statusReason,
  counted: r.status === 'verified' || r.status === 'unverified',
  transaction_id: r.status === 'verified' || r.status === 'unverified' ? r.transactionId : null,
  created_at: r.createdAt,
  updated_at: r.updatedAt ?? r.createdAt,
})

/** The confirmations a tenant received, newest first, and one by its TransID. */
export function createC2bPayments(deps: PaymentDeps) {
  function list(actor: Actor, q: { tenant_id?: string; status?: string; limit?: number }) {
    const tid = tenantFor(actor, q.tenant_id)
    const t = c2bPayments
    const rows = deps
      .tenantDb(tid)
      .orm.select()
      .from(t)
      .where(and(eq(t.tenantId, tid), q.status ? eq(t.status, q.status) : undefined))
      .orderBy(desc(t.createdAt), desc(t.id))
      .limit(q.limit ?? 100)
      .all() as C2bRow[]
    return { data: rows.map(c2bPaymentView) }
  }

  function get(actor: Actor, transId: string, named?: string) {
    const tid = tenantFor(actor, named)
    const row = getC2bPayment(deps.tenantDb(tid), tid, transId.trim().toUpperCase())
    if (!row) throw new NotFound('C2B payment', transId)
    return c2bPaymentView(row)
  }

  return { list, get }
}
