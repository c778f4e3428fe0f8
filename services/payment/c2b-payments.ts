import { NotFound } from '../kernel/errors.ts'
import { type Actor, tenantFor } from '../kernel/roles.ts'
import { type C2bRow, getC2bPayment } from './c2b-verify.ts'
import type { PaymentDeps } from './deps.ts'

/** A C2B payment as the API shows it: its verification status says whether it counts. */
export const c2bPaymentView = (r: C2bRow) => ({
  id: r.id,
  trans_id: r.trans_id,
  shortcode: r.shortcode,
  transaction_type: r.transaction_type,
  amount: r.amount_cents / 100,
  bill_ref_number: r.bill_ref_number,
  phone_number: r.msisdn,
  payer_name: r.payer_name,
  trans_time: r.trans_time,
  third_party_trans_id: r.third_party_trans_id,
  status: r.status,
  status_reason: r.status_reason,
  counted: r.status === 'verified' || r.status === 'unverified',
  transaction_id: r.status === 'verified' || r.status === 'unverified' ? r.transaction_id : null,
  created_at: r.created_at,
  updated_at: r.updated_at ?? r.created_at,
})

/** The confirmations a tenant received, newest first, and one by its TransID. */
export function createC2bPayments(deps: PaymentDeps) {
  function list(actor: Actor, q: { tenant_id?: string; status?: string; limit?: number }) {
    const tid = tenantFor(actor, q.tenant_id)
    const rows = deps
      .tenantDb(tid)
      .sqlite.query<C2bRow, [string, string, number]>(
        `SELECT * FROM c2b_payments WHERE tenant_id = ?1 AND (?2 = '' OR status = ?2)
         ORDER BY created_at DESC, id DESC LIMIT ?3`,
      )
      .all(tid, q.status ?? '', q.limit ?? 100)
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
