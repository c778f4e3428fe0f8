import { and, asc, desc, eq, isNull, lt, lte } from 'drizzle-orm'
import {
  invoicePayments,
  invoices,
  planChanges,
  subscriptions,
} from '../../schema/billing/tables.ts'
import { Conflict, NotFound } from '../kernel/errors.ts'
import { newId } from '../kernel/ids.ts'
import { toMajor } from '../kernel/money.ts'
import { type Actor, isOperator } from '../kernel/roles.ts'
import { type Billing, DAY_MS, iso } from './billing.ts'
import type { Invoice, InvoiceLine } from './model.ts'
import { describeSeconds } from './periods.ts'
import { findPlan } from './plans.ts'
import { type SubscriptionRow, updateSubscription } from './subscriptions.ts'
import { usedIn } from './usage.ts'

type InvoiceRow = typeof invoices.$inferSelect
interface Line {
  type: InvoiceLine['type']
  description: string
  quantity: number
  unitCents: number
  amountCents: number
  metric?: string
}

const day = (s: string) => s.slice(0, 10)

/** The next number of a gap-free sequence; call inside the transaction that uses it. */
function nextNumber(b: Billing, name: string): number {
  const row = b.db.sqlite
    .query<{ value: number }, [string]>(
      'INSERT INTO counters (name, value) VALUES (?, 1) ON CONFLICT(name) DO UPDATE SET value = value + 1 RETURNING value',
    )
    .get(name)
  return row!.value
}

/**
 * Bills the subscription's current period, which has ended (call inside the cycle's transaction):
 * the base fee of the plan the period started on, a proration line per plan change not billed yet,
 * an overage line per metric used past the limit of the current plan, then credit. A period with
 * nothing to charge gets no invoice, so numbers are not spent on empty free-tier invoices; a
 * period whose charges are wholly covered by credit gets a paid invoice of 0.
 */
export function generateInvoice(b: Billing, sub: SubscriptionRow): InvoiceRow | null {
  const periodStart = sub.currentPeriodStart
  const periodEnd = sub.currentPeriodEnd
  const lines: Line[] = []
  const basePlan = findPlan(b.db, sub.periodPlanId)
  if (basePlan && basePlan.priceCents > 0) {
    lines.push({
      type: 'base',
      description: `${basePlan.name} plan, ${day(periodStart)} to ${day(periodEnd)}`,
      quantity: 1,
      unitCents: basePlan.priceCents,
      amountCents: basePlan.priceCents,
    })
  }
  const changes = b.db.orm
    .select()
    .from(planChanges)
    .where(
      and(
        eq(planChanges.tenantId, sub.tenantId),
        isNull(planChanges.invoiceId),
        lte(planChanges.periodStart, periodStart),
      ),
    )
    .orderBy(asc(planChanges.changedAt))
    .all()
  for (const c of changes) {
    const from = findPlan(b.db, c.fromPlan)?.name ?? c.fromPlan
    const to = findPlan(b.db, c.toPlan)?.name ?? c.toPlan
    lines.push({
      type: 'proration',
      description: `${from} to ${to} on ${c.changedAt.slice(0, 16).replace('T', ' ')} UTC, ${
        c.amountCents >= 0 ? 'charge' : 'credit'
      } for ${describeSeconds(c.remainingSeconds)} of ${describeSeconds(c.periodSeconds)}`,
      quantity: 1,
      unitCents: c.amountCents,
      amountCents: c.amountCents,
    })
  }
  const plan = findPlan(b.db, sub.planId)
  const used = usedIn(b, sub.tenantId, periodStart)
  for (const metric of ['transactions', 'statements'] as const) {
    const limit = plan?.limits[metric]
    const unit = plan?.overage[metric] ?? 0
    if (limit === null || limit === undefined || unit <= 0) continue
    const over = used[metric] - limit
    if (over <= 0) continue
    lines.push({
      type: 'overage',
      metric,
      description: `${metric} over the limit of ${limit} (used ${used[metric]})`,
      quantity: over,
      unitCents: unit,
      amountCents: over * unit,
    })
  }
  if (lines.length === 0) return null

  const subtotal = lines.reduce((s, l) => s + l.amountCents, 0)
  let credit = sub.creditCents
  if (subtotal < 0) {
    credit += -subtotal
    lines.push({
      type: 'credit',
      description: 'Credit carried to the next invoice',
      quantity: 1,
      unitCents: -subtotal,
      amountCents: -subtotal,
    })
  } else if (credit > 0 && subtotal > 0) {
    const applied = Math.min(credit, subtotal)
    credit -= applied
    lines.push({
      type: 'credit',
      description: 'Credit from earlier plan changes',
      quantity: 1,
      unitCents: -applied,
      amountCents: -applied,
    })
  }
  const total = lines.reduce((s, l) => s + l.amountCents, 0)
  const issuedAt = periodEnd
  const row: InvoiceRow = {
    id: newId('inv'),
    number: `INV-${String(nextNumber(b, 'invoice')).padStart(6, '0')}`,
    tenantId: sub.tenantId,
    status: total === 0 ? 'paid' : 'open',
    planId: sub.planId,
    periodStart,
    periodEnd,
    lines: JSON.stringify(
      lines.map((l) => ({
        type: l.type,
        description: l.description,
        quantity: l.quantity,
        unit_amount: toMajor(l.unitCents),
        amount: toMajor(l.amountCents),
        ...(l.metric ? { metric: l.metric } : {}),
      })),
    ),
    subtotalCents: subtotal,
    totalCents: total,
    currency: plan?.currency ?? 'KES',
    issuedAt,
    dueAt: iso(new Date(new Date(issuedAt).getTime() + b.dueDays * DAY_MS)),
    paidAt: total === 0 ? issuedAt : null,
    voidedAt: null,
  }
  b.db.orm.insert(invoices).values(row).run()
  for (const c of changes)
    b.db.orm.update(planChanges).set({ invoiceId: row.id }).where(eq(planChanges.id, c.id)).run()
  if (credit !== sub.creditCents)
    b.db.orm
      .update(subscriptions)
      .set({ creditCents: credit })
      .where(eq(subscriptions.tenantId, sub.tenantId))
      .run()
  return row
}

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

/**
 * Marks an invoice paid (payment service reported success) and, when the tenant owes nothing
 * past due any more, makes a past-due or suspended subscription active again.
 */
export function markInvoicePaid(
  b: Billing,
  invoice: InvoiceRow,
  at: Date,
  checkoutRequestId: string | null,
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
      updateSubscription(b, sub, { gracePeriodEnds: graceEnds }, 'grace_period_moved', at)
    return false
  }
  updateSubscription(b, sub, { status: 'active', gracePeriodEnds: null }, 'reactivated', at)
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
  tenantId: string,
  data: { checkout_request_id: string; status: string; result_desc: string | null },
  accountReference: string,
  amountCents: number,
  phone: string | null,
  at: Date,
): boolean {
  return b.db.write(() => {
    const byCheckout = b.db.sqlite
      .query(
        'UPDATE invoice_payments SET status = ?, result_desc = ?, updated_at = ? WHERE checkout_request_id = ? AND tenant_id = ?',
      )
      .run(data.status || 'failed', data.result_desc, iso(at), data.checkout_request_id, tenantId)
    if (byCheckout.changes > 0) return true
    const inv = b.db.orm
      .select()
      .from(invoices)
      .where(and(eq(invoices.number, accountReference), eq(invoices.tenantId, tenantId)))
      .get()
    if (!inv) return false
    b.db.orm
      .insert(invoicePayments)
      .values({
        id: newId('pay'),
        invoiceId: inv.id,
        tenantId,
        checkoutRequestId: data.checkout_request_id,
        amountCents,
        phoneNumber: phone,
        status: data.status || 'failed',
        resultDesc: data.result_desc,
        createdAt: iso(at),
        updatedAt: iso(at),
      })
      .run()
    return true
  })
}

export function assertPayable(inv: InvoiceRow): void {
  if (inv.status === 'paid') throw new Conflict(`invoice ${inv.number} is already paid`)
  if (inv.status === 'void') throw new Conflict(`invoice ${inv.number} is void`)
}
