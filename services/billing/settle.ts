import { and, eq } from 'drizzle-orm'
import { invoicePayments, invoices, subscriptions } from '../../schema/billing/tables.ts'
import { Conflict, NotFound } from '../kernel/errors.ts'
import { newId } from '../kernel/ids.ts'
import { type Billing, iso } from './billing.ts'
import { graceEndsFor, type InvoiceRow } from './invoices.ts'
import { updateSubscription } from './subscriptions.ts'

/**
 * Marks an invoice paid (payment service reported success) and, when the tenant owes nothing
 * past due any more, makes a past-due or suspended subscription active again.
 */
export function markInvoicePaid(
  b: Billing,
  {
    invoice,
    at,
    checkoutRequestId,
  }: { invoice: InvoiceRow; at: Date; checkoutRequestId: string | null },
): { reactivated: boolean } {
  return b.db.write(() => {
    const current = b.db.orm.select().from(invoices).where(eq(invoices.id, invoice.id)).get()!
    if (current.status === 'paid' || current.status === 'void') return { reactivated: false }
    b.db.orm
      .update(invoices)
      .set({ status: 'paid', paidAt: iso(at) })
      .where(eq(invoices.id, invoice.id))
      .run()
    if (checkoutRequestId)
      b.db.orm
        .update(invoicePayments)
        .set({ status: 'success', updatedAt: iso(at) })
        .where(eq(invoicePayments.checkoutRequestId, checkoutRequestId))
        .run()
    return { reactivated: settleSubscription(b, invoice.tenantId, at) }
  })
}

/**
 * After an invoice stopped being owed (paid or void): a past-due or suspended subscription with
 * nothing else past due is active again; otherwise its grace period follows the earliest unpaid.
 */
function settleSubscription(b: Billing, tenantId: string, at: Date): boolean {
  const sub = b.db.orm
    .select()
    .from(subscriptions)
    .where(eq(subscriptions.tenantId, tenantId))
    .get()
  if (!sub || (sub.status !== 'past_due' && sub.status !== 'suspended')) return false
  const graceEnds = graceEndsFor(b, tenantId)
  if (graceEnds) {
    if (graceEnds !== sub.gracePeriodEnds && sub.status === 'past_due')
      updateSubscription(b, {
        sub,
        patch: { gracePeriodEnds: graceEnds },
        reason: 'grace_period_moved',
        at,
      })
    return false
  }
  updateSubscription(b, {
    sub,
    patch: { status: 'active', gracePeriodEnds: null },
    reason: 'reactivated',
    at,
  })
  return true
}

/** The operator writes an invoice off: nothing is owed on it any more. */
export function voidInvoice(b: Billing, invoiceId: string, at: Date): InvoiceRow {
  return b.db.write(() => {
    const inv = b.db.orm.select().from(invoices).where(eq(invoices.id, invoiceId)).get()
    if (!inv) throw new NotFound('invoice', invoiceId)
    if (inv.status === 'void') return inv
    if (inv.status === 'paid')
      throw new Conflict(`invoice ${inv.number} is paid; it cannot be voided`)
    b.db.orm
      .update(invoices)
      .set({ status: 'void', voidedAt: iso(at) })
      .where(eq(invoices.id, invoiceId))
      .run()
    settleSubscription(b, inv.tenantId, at)
    return { ...inv, status: 'void', voidedAt: iso(at) }
  })
}

/** Notes a failed STK push against the invoice it was paying; the invoice stays unpaid. */
export function notePaymentFailed(
  b: Billing,
  attempt: {
    tenantId: string
    checkoutRequestId: string
    /** The payment's status ('failed' when the event has none), and the provider's words. */
    status: string
    resultDesc: string | null
    /** The invoice number the payment named (its account reference). */
    invoiceNumber: string
    amountCents: number
    phone: string | null
    at: Date
  },
): boolean {
  const { tenantId, invoiceNumber, amountCents, phone, at } = attempt
  const status = attempt.status || 'failed'
  return b.db.write(() => {
    const p = invoicePayments
    const byCheckout = b.db.orm
      .update(p)
      .set({ status, resultDesc: attempt.resultDesc, updatedAt: iso(at) })
      .where(and(eq(p.checkoutRequestId, attempt.checkoutRequestId), eq(p.tenantId, tenantId)))
      .returning({ id: p.id })
      .all()
    if (byCheckout.length > 0) return true
    const inv = b.db.orm
      .select()
      .from(invoices)
      .where(and(eq(invoices.number, invoiceNumber), eq(invoices.tenantId, tenantId)))
      .get()
    if (!inv) return false
    b.db.orm
      .insert(invoicePayments)
      .values({
        id: newId('pay'),
        invoiceId: inv.id,
        tenantId,
        checkoutRequestId: attempt.checkoutRequestId,
        amountCents,
        phoneNumber: phone,
        status,
        resultDesc: attempt.resultDesc,
        createdAt: iso(at),
        updatedAt: iso(at),
      })
      .run()
    return true
  })
}
