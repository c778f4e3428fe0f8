import { and, asc, eq, isNull, lte, sql } from 'drizzle-orm'
import { counters, invoices, planChanges, subscriptions } from '../../schema/billing/tables.ts'
import { newId } from '../kernel/ids.ts'
import { toMajor } from '../kernel/money.ts'
import { type Billing, DAY_MS, iso } from './billing.ts'
import type { InvoiceRow } from './invoices.ts'
import type { InvoiceLine } from './model.ts'
import { describeSeconds } from './periods.ts'
import { findPlan } from './plans.ts'
import type { SubscriptionRow } from './subscriptions.ts'
import { usedIn } from './usage.ts'

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
  const row = b.db.orm
    .insert(counters)
    .values({ name, value: 1 })
    .onConflictDoUpdate({ target: counters.name, set: { value: sql`${counters.value} + 1` } })
    .returning({ value: counters.value })
    .get()
  return row.value
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
