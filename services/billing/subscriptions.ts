import { asc, eq, sql } from 'drizzle-orm'
import { planChanges, subscriptionEvents, subscriptions } from '../../schema/billing/tables.ts'
import { type PlanTerms, type SubscriptionChangedEvent, topics } from '../../schema/events.ts'
import type { Clock } from '../kernel/clock.ts'
import { Conflict, NotFound } from '../kernel/errors.ts'
import { emitEvent } from '../kernel/events.ts'
import { newId } from '../kernel/ids.ts'
import { toMajor } from '../kernel/money.ts'
import { snakeFields } from '../kernel/snake.ts'
import { assertTenantId, PLATFORM_TENANT } from '../kernel/tenant-id.ts'
import { type Billing, iso } from './billing.ts'
import type { Subscription, SubscriptionStatus } from './model.ts'
import { periodOf, prorate } from './periods.ts'
import { findPlan, getPlan, type PlanRow } from './plans.ts'

export type SubscriptionRow = typeof subscriptions.$inferSelect

/**
 * A subscription as the API answers it, its keys in the response schema's order (an idempotent
 * replay answers the stored value in the order built here, and must send the same bytes).
 */
export function toSubscription(s: SubscriptionRow): Subscription {
  return {
    ...snakeFields(s, ['id', 'tenantId']),
    plan: s.planId,
    status: s.status as SubscriptionStatus,
    ...snakeFields(s, [
      'currentPeriodStart',
      'currentPeriodEnd',
      'gracePeriodEnds',
      'cancelAtPeriodEnd',
    ]),
    credit: toMajor(s.creditCents),
    ...snakeFields(s, ['createdAt', 'updatedAt']),
  }
}

/** What the tenant service needs of a plan to apply it: tier, feature defaults, user limit. */
export function termsOfPlan(p: PlanRow | null): PlanTerms | null {
  if (!p) return null
  return { tier: p.tier, features: { ...p.features }, users: p.limits.users ?? null }
}

export function findSubscription(b: Billing, tenantId: string): SubscriptionRow | null {
  return (
    b.db.orm.select().from(subscriptions).where(eq(subscriptions.tenantId, tenantId)).get() ?? null
  )
}

/**
 * Writes the history row and the `subscriptions.changed` outbox event of one change; call inside
 * the transaction that made the change.
 */
export function recordChange(
  b: Billing,
  {
    sub,
    prev,
    reason,
    at,
  }: {
    sub: SubscriptionRow
    /** Its plan and status before the change; null for a new subscription. */
    prev: { plan: string; status: string } | null
    reason: string
    at: Date
  },
): void {
  const id = newId('evt')
  b.db.orm
    .insert(subscriptionEvents)
    .values({
      id,
      tenantId: sub.tenantId,
      reason,
      plan: sub.planId,
      previousPlan: prev?.plan ?? null,
      status: sub.status,
      previousStatus: prev?.status ?? null,
      periodStart: sub.currentPeriodStart,
      periodEnd: sub.currentPeriodEnd,
      occurredAt: iso(at),
    })
    .run()
  const data: SubscriptionChangedEvent = {
    plan: sub.planId,
    previous_plan: prev?.plan ?? null,
    status: sub.status,
    previous_status: prev?.status ?? null,
    reason,
    current_period_start: sub.currentPeriodStart,
    current_period_end: sub.currentPeriodEnd,
    plan_terms: termsOfPlan(findPlan(b.db, sub.planId)),
    plan_revision: sub.planRevision,
  }
  const clock = { now: () => at } as Clock
  emitEvent(b.db, { id, topic: topics.subscriptionsChanged, tenantId: sub.tenantId, data }, clock)
}

/** Applies `patch` to a subscription row, records the change and returns the new row. */
export function updateSubscription(
  b: Billing,
  {
    sub,
    patch,
    reason,
    at,
  }: { sub: SubscriptionRow; patch: Partial<SubscriptionRow>; reason: string; at: Date },
): SubscriptionRow {
  const next = { ...sub, ...patch, updatedAt: iso(at) }
  b.db.orm
    .update(subscriptions)
    .set({ ...patch, updatedAt: next.updatedAt })
    .where(eq(subscriptions.tenantId, sub.tenantId))
    .run()
  recordChange(b, { sub: next, prev: { plan: sub.planId, status: sub.status }, reason, at })
  return next
}

/**
 * The tenant's subscription, created on `plan` (by default the plan its profile names, else
 * free) when it has none yet; the first period starts at `at`. Returns whether it was created
 * (the caller writes entitlements).
 */
export function ensureSubscription(
  b: Billing,
  {
    tenantId,
    at,
    plan,
    tenantName = null,
  }: { tenantId: string; at: Date; plan?: string; tenantName?: string | null },
): { sub: SubscriptionRow; created: boolean } {
  assertTenantId(tenantId)
  if (tenantId === PLATFORM_TENANT) throw new NotFound('subscription of tenant', tenantId)
  const existing = findSubscription(b, tenantId)
  if (existing) return { sub: existing, created: false }
  // Only a tenant the tenant service created gets a subscription: never a ghost or an erased one.
  b.ctx.registry.assertExists(tenantId)
  return b.db.write(() => {
    const again = findSubscription(b, tenantId)
    if (again) return { sub: again, created: false }
    // Made before the tenant's `created` event arrived (a read came first): the plan its profile
    // names, so the subscription does not start on free and pull the tenant back down.
    const wanted = plan ?? b.ctx.registry.placement(tenantId).plan ?? 'free'
    const planId = findPlan(b.db, wanted) ? wanted : 'free'
    const { start, end } = periodOf(at, 0)
    const sub: SubscriptionRow = {
      tenantId,
      id: newId('sub'),
      tenantName,
      planId,
      planRevision: 1,
      periodPlanId: planId,
      status: 'active',
      billingAnchor: iso(at),
      periodIndex: 0,
      currentPeriodStart: iso(start),
      currentPeriodEnd: iso(end),
      gracePeriodEnds: null,
      cancelAtPeriodEnd: false,
      creditCents: 0,
      createdAt: iso(at),
      updatedAt: iso(at),
    }
    b.db.orm.insert(subscriptions).values(sub).run()
    recordChange(b, { sub, prev: null, reason: 'created', at })
    return { sub, created: true }
  })
}

/**
 * Moves a subscription to another plan at once (DESIGN §10). The price difference for the rest of
 * the period, by remaining seconds, becomes a proration line on the next invoice: a charge on an
 * upgrade, a credit on a downgrade. Changing to the current plan is a no-op. Every change raises
 * the plan revision its `subscriptions.changed` event carries.
 */
export function changePlan(
  b: Billing,
  { tenantId, planId, at }: { tenantId: string; planId: string; at: Date },
): { sub: SubscriptionRow; changed: boolean } {
  const to = getPlan(b.db, planId)
  const { sub: existing } = ensureSubscription(b, { tenantId, at })
  if (existing.planId === to.id) return { sub: existing, changed: false }
  return b.db.write(() => {
    const sub = findSubscription(b, tenantId)!
    if (sub.planId === to.id) return { sub, changed: false }
    if (sub.status === 'canceled') throw new Conflict(`the subscription of ${tenantId} is canceled`)
    const from = findPlan(b.db, sub.planId)
    const fromCents = from?.priceCents ?? 0
    const p = prorate({
      fromCents,
      toCents: to.priceCents,
      start: new Date(sub.currentPeriodStart),
      end: new Date(sub.currentPeriodEnd),
      at,
    })
    if (p.amountCents !== 0) {
      b.db.orm
        .insert(planChanges)
        .values({
          id: newId('sub'),
          tenantId,
          fromPlan: sub.planId,
          toPlan: to.id,
          changedAt: iso(at),
          periodStart: sub.currentPeriodStart,
          periodEnd: sub.currentPeriodEnd,
          remainingSeconds: p.remainingSeconds,
          periodSeconds: p.periodSeconds,
          amountCents: p.amountCents,
          invoiceId: null,
        })
        .run()
    }
    const reason =
      to.priceCents > fromCents ? 'upgraded' : to.priceCents < fromCents ? 'downgraded' : 'changed'
    const patch = { planId: to.id, planRevision: sub.planRevision + 1 }
    return { sub: updateSubscription(b, { sub, patch, reason, at }), changed: true }
  })
}

/** The tenant was deleted: the subscription ends now and nothing more is invoiced. */
export function cancelSubscription(b: Billing, tenantId: string, at: Date): SubscriptionRow | null {
  return b.db.write(() => {
    const sub = findSubscription(b, tenantId)
    if (!sub || sub.status === 'canceled') return sub
    return updateSubscription(b, {
      sub,
      patch: { status: 'canceled', gracePeriodEnds: null, cancelAtPeriodEnd: false },
      reason: 'canceled',
      at,
    })
  })
}

/** Oldest first, in the order the changes were written. */
export function listSubscriptionEvents(b: Billing, tenantId: string) {
  return b.db.orm
    .select()
    .from(subscriptionEvents)
    .where(eq(subscriptionEvents.tenantId, tenantId))
    .orderBy(asc(sql`rowid`))
    .all()
    .map((e) => ({
      id: e.id,
      tenant_id: e.tenantId,
      reason: e.reason,
      plan: e.plan,
      previous_plan: e.previousPlan,
      status: e.status,
      previous_status: e.previousStatus,
      current_period_start: e.periodStart,
      current_period_end: e.periodEnd,
      occurred_at: e.occurredAt,
    }))
}
