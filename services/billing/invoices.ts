import { and, asc, desc, eq, lt } from 'drizzle-orm'
import { invoicePayments, invoices } from '../../schema/billing/tables.ts'
import { Conflict, NotFound } from '../kernel/errors.ts'
import { toMajor } from '../kernel/money.ts'
import { type Actor, isOperator } from '../kernel/roles.ts'
import { type Billing, DAY_MS, iso } from './billing.ts'
import type { Invoice } from './model.ts'

export type InvoiceRow = typeof invoices.$inferSelect

export function toInvoice(r: InvoiceRow, attempts?: Array<typeof invoicePayments.$inferSelect>) {
  const inv: Invoice = {
    id: r.id,
    number: r.number,
    tenant_id: r.tenantId,
    status: r.status as Invoice['status'],
    plan: r.planId,
    period_start: r.periodStart,
    period_end: r.periodEnd,
    lines: JSON.parse(r.lines),
    subtotal: toMajor(r.subtotalCents),
    total: toMajor(r.totalCents),
    currency: r.currency,
    issued_at: r.issuedAt,
    due_at: r.dueAt,
    paid_at: r.paidAt,
  }
  if (attempts)
    inv.payment_attempts = attempts.map((a) => ({
      id: a.id,
      checkout_request_id: a.checkoutRequestId,
      amount: toMajor(a.amountCents),
      phone_number: a.phoneNumber,
      status: a.status,
      result_desc: a.resultDesc,
      created_at: a.createdAt,
      updated_at: a.updatedAt,
    }))
  return inv
}

/** Newest first; `tenantId` null lists every tenant (operator). */
export function listInvoices(
  b: Billing,
  tenantId: string | null,
  opts: { limit: number; cursor?: string | undefined; status?: string | undefined },
) {
  const conds = [
    tenantId ? eq(invoices.tenantId, tenantId) : undefined,
    opts.cursor ? lt(invoices.id, opts.cursor) : undefined,
    opts.status ? eq(invoices.status, opts.status) : undefined,
  ].filter(Boolean)
  const rows = b.db.orm
    .select()
    .from(invoices)
    .where(and(...conds))
    .orderBy(desc(invoices.id))
    .limit(opts.limit + 1)
    .all()
  const page = rows.slice(0, opts.limit)
  return {
    data: page.map((r) => toInvoice(r)),
    next_cursor: rows.length > opts.limit ? page[page.length - 1]!.id : null,
    has_more: rows.length > opts.limit,
  }
}

/** An invoice the actor may see: its own tenant's, or any for the operator; else 404. */
export function getInvoiceRow(b: Billing, actor: Actor, invoiceId: string): InvoiceRow {
  const r = b.db.orm.select().from(invoices).where(eq(invoices.id, invoiceId)).get()
  if (!r || (!isOperator(actor) && r.tenantId !== actor.tenantId))
    throw new NotFound('invoice', invoiceId)
  return r
}

export function paymentAttempts(b: Billing, invoiceId: string) {
  return b.db.orm
    .select()
    .from(invoicePayments)
    .where(eq(invoicePayments.invoiceId, invoiceId))
    .orderBy(asc(invoicePayments.createdAt))
    .all()
}

/** Earliest due date among the tenant's past-due invoices, or null. */
function earliestPastDue(b: Billing, tenantId: string): string | null {
  const r = b.db.orm
    .select({ dueAt: invoices.dueAt })
    .from(invoices)
    .where(and(eq(invoices.tenantId, tenantId), eq(invoices.status, 'past_due')))
    .orderBy(asc(invoices.dueAt))
    .limit(1)
    .get()
  return r?.dueAt ?? null
}

export function graceEndsFor(b: Billing, tenantId: string): string | null {
  const due = earliestPastDue(b, tenantId)
  return due ? iso(new Date(new Date(due).getTime() + b.graceDays * DAY_MS)) : null
}

export function assertPayable(inv: InvoiceRow): void {
  if (inv.status === 'paid') throw new Conflict(`invoice ${inv.number} is already paid`)
  if (inv.status === 'void') throw new Conflict(`invoice ${inv.number} is void`)
}
