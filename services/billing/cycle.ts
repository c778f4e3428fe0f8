import { and, asc, eq, lte, ne } from 'drizzle-orm'
import { invoices, subscriptions } from '../../schema/billing/tables.ts'
import { faultPoint } from '../kernel/faults.ts'
import { type Billing, iso } from './billing.ts'
import { generateInvoice } from './generate-invoice.ts'
import { graceEndsFor } from './invoices.ts'
import type { CycleReport } from './model.ts'
import { periodOf } from './periods.ts'
import { findSubscription, updateSubscription } from './subscriptions.ts'
import { syncEntitlements } from './usage.ts'

/**
 * The billing cycle as of `at` (the scheduler runs it with the clock's now; the operator route and
 * `mmp billing run-cycle --at` with any time, so a month passes in a test):
 * 1. every period that ended by `at` is invoiced and the subscription renewed (one transaction per
 *    period, catching up several periods if needed; the renewal is stamped at the period end);
 * 2. open invoices due by `at` become past_due and their subscription past_due, with the grace
 *    period running from the earliest unpaid due date;
 * 3. past-due subscriptions whose grace period ended by `at` are suspended.
 * Running it twice for the same `at` changes nothing the second time.
 */
export function runCycle(b: Billing, at: Date): CycleReport {
  const report: CycleReport = {
    at: iso(at),
    invoices: [],
    renewed: [],
    past_due: [],
    suspended: [],
  }
  const touched = new Set<string>()
  const atIso = iso(at)

  const due = b.db.orm
    .select({ tenantId: subscriptions.tenantId })
    .from(subscriptions)
    .where(and(ne(subscriptions.status, 'canceled'), lte(subscriptions.currentPeriodEnd, atIso)))
    .orderBy(asc(subscriptions.tenantId))
    .all()
  for (const { tenantId } of due) {
    for (;;) {
      const invoiced = report.invoices.length
      const renewed = b.db.write(() => {
        const sub = findSubscription(b, tenantId)
        if (!sub || sub.status === 'canceled' || sub.currentPeriodEnd > atIso) return false
        const invoice = generateInvoice(b, sub)
        if (invoice) report.invoices.push(invoice.id)
        const endedAt = new Date(sub.currentPeriodEnd)
        if (sub.cancelAtPeriodEnd) {
          updateSubscription(b, {
            sub,
            patch: { status: 'canceled', cancelAtPeriodEnd: false },
            reason: 'canceled',
            at: endedAt,
          })
          return false
        }
        const next = periodOf(new Date(sub.billingAnchor), sub.periodIndex + 1)
        updateSubscription(b, {
          sub: findSubscription(b, tenantId)!,
          patch: {
            periodIndex: sub.periodIndex + 1,
            currentPeriodStart: iso(next.start),
            currentPeriodEnd: iso(next.end),
            periodPlanId: sub.planId,
          },
          reason: 'renewed',
          at: endedAt,
        })
        return true
      })
      // The invoice and the renewal commit together: a crash here must not invoice the period again.
      if (report.invoices.length > invoiced) faultPoint('billing.cycle.after_invoice')
      touched.add(tenantId)
      if (!renewed) break
      if (!report.renewed.includes(tenantId)) report.renewed.push(tenantId)
    }
  }

  const overdue = b.db.orm
    .select()
    .from(invoices)
    .where(and(eq(invoices.status, 'open'), lte(invoices.dueAt, atIso)))
    .orderBy(asc(invoices.dueAt))
    .all()
  for (const inv of overdue) {
    b.db.write(() => {
      b.db.orm.update(invoices).set({ status: 'past_due' }).where(eq(invoices.id, inv.id)).run()
      const sub = findSubscription(b, inv.tenantId)
      if (sub && (sub.status === 'active' || sub.status === 'trialing')) {
        updateSubscription(b, {
          sub,
          patch: { status: 'past_due', gracePeriodEnds: graceEndsFor(b, inv.tenantId) },
          reason: 'payment_overdue',
          at: new Date(inv.dueAt),
        })
        report.past_due.push(inv.tenantId)
      }
    })
    touched.add(inv.tenantId)
  }

  const lapsed = b.db.orm
    .select()
    .from(subscriptions)
    .where(and(eq(subscriptions.status, 'past_due'), lte(subscriptions.gracePeriodEnds, atIso)))
    .all()
  for (const s of lapsed) {
    b.db.write(() => {
      const sub = findSubscription(b, s.tenantId)
      if (sub?.status !== 'past_due' || !sub.gracePeriodEnds) return
      if (sub.gracePeriodEnds > atIso) return
      updateSubscription(b, {
        sub,
        patch: { status: 'suspended' },
        reason: 'grace_period_ended',
        at: new Date(sub.gracePeriodEnds),
      })
      report.suspended.push(s.tenantId)
    })
    touched.add(s.tenantId)
  }

  for (const tenantId of touched) syncEntitlements(b, tenantId, at)
  return report
}
