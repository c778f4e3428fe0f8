import { and, eq, sql } from 'drizzle-orm'
import { usageRecords } from '../../schema/billing/tables.ts'
import { topics } from '../../schema/events.ts'
import { type Entitlements, removeEntitlements, writeEntitlements } from '../kernel/entitlements.ts'
import { emitEvent } from '../kernel/events.ts'
import { newId } from '../kernel/ids.ts'
import { type Billing, iso } from './billing.ts'
import { type UsageMetric, usageMetrics } from './model.ts'
import { findPlan } from './plans.ts'
import { ensureSubscription, findSubscription } from './subscriptions.ts'

export interface RecordUsageInput {
  tenantId: string
  metric: UsageMetric
  quantity: number
  eventId: string
  source: 'api' | 'event'
}

/**
 * Records metered usage once per (tenant, event id) into the subscription's current period. A
 * repeated event id changes nothing and returns the first record with `duplicate: true`.
 */
export function recordUsage(b: Billing, input: RecordUsageInput, at: Date) {
  ensureSubscription(b, { tenantId: input.tenantId, at })
  const result = b.db.write(() => {
    const sub = findSubscription(b, input.tenantId)!
    const row = {
      id: newId('use'),
      tenantId: input.tenantId,
      eventId: input.eventId,
      metric: input.metric,
      quantity: input.quantity,
      periodStart: sub.currentPeriodStart,
      source: input.source,
      recordedAt: iso(at),
    }
    const inserted = b.db.orm
      .insert(usageRecords)
      .values(row)
      .onConflictDoNothing()
      .returning({ id: usageRecords.id })
      .get()
    if (inserted) return { row, duplicate: false }
    const first = b.db.orm
      .select()
      .from(usageRecords)
      .where(
        and(eq(usageRecords.tenantId, input.tenantId), eq(usageRecords.eventId, input.eventId)),
      )
      .get()!
    return { row: first, duplicate: true }
  })
  if (!result.duplicate) syncEntitlements(b, input.tenantId, at)
  const r = result.row
  return {
    id: r.id,
    tenant_id: r.tenantId,
    metric: r.metric,
    quantity: r.quantity,
    event_id: r.eventId,
    period_start: r.periodStart,
    recorded_at: r.recordedAt,
    duplicate: result.duplicate,
  }
}

/** Usage per metric of one period (every metered metric present, 0 when unused). */
export function usedIn(b: Billing, tenantId: string, periodStart: string) {
  const rows = b.db.orm
    .select({ metric: usageRecords.metric, used: sql<number>`sum(${usageRecords.quantity})` })
    .from(usageRecords)
    .where(and(eq(usageRecords.tenantId, tenantId), eq(usageRecords.periodStart, periodStart)))
    .groupBy(usageRecords.metric)
    .all()
  const used = Object.fromEntries(usageMetrics.map((m) => [m, 0])) as Record<UsageMetric, number>
  for (const r of rows) used[r.metric as UsageMetric] = Number(r.used)
  return used
}

/** `GET /usage/{tenant_id}`: this period's usage against the plan's limits. */
export function usageStats(b: Billing, tenantId: string, at: Date) {
  const { sub } = ensureSubscription(b, { tenantId, at })
  const plan = findPlan(b.db, sub.planId)
  const used = usedIn(b, tenantId, sub.currentPeriodStart)
  const limits = plan?.limits ?? {
    transactions: null,
    statements: null,
    users: null,
    webhook_endpoints: null,
  }
  return {
    tenant_id: tenantId,
    plan: sub.planId,
    status: sub.status,
    period_start: sub.currentPeriodStart,
    period_end: sub.currentPeriodEnd,
    metrics: {
      transactions: { used: used.transactions, limit: limits.transactions },
      statements: { used: used.statements, limit: limits.statements },
      payments: { used: used.payments, limit: null },
      api_calls: { used: used.api_calls, limit: null },
      // Counted by their owners (auth, webhook); the route asks them.
      users: { used: null as number | null, limit: limits.users },
      webhook_endpoints: { used: null as number | null, limit: limits.webhook_endpoints },
    },
  }
}

/**
 * Rewrites `tenants/<id>/entitlements.json`, which the shared `assertEntitled` check in every
 * service reads (402 when suspended or past a limit). Billing is its only writer; call after the
 * transaction that changed a subscription or its usage committed.
 */
export function syncEntitlements(b: Billing, tenantId: string, at: Date): void {
  const sub = findSubscription(b, tenantId)
  if (!sub) return
  // Canceled only follows a tenant's deletion: its folder is gone and must not come back.
  if (sub.status === 'canceled') {
    removeEntitlements(b.ctx.registry, tenantId)
    announce(b, tenantId, null)
    return
  }
  const plan = findPlan(b.db, sub.planId)
  const used = usedIn(b, tenantId, sub.currentPeriodStart)
  const e: Entitlements = {
    plan: sub.planId,
    status: sub.status as Entitlements['status'],
    period_start: sub.currentPeriodStart,
    period_end: sub.currentPeriodEnd,
    limits: {
      transactions: plan?.limits.transactions ?? null,
      statements: plan?.limits.statements ?? null,
      users: plan?.limits.users ?? null,
      webhook_endpoints: plan?.limits.webhook_endpoints ?? null,
      payments: null,
      api_calls: null,
    },
    used,
    updated_at: iso(at),
  }
  try {
    writeEntitlements(b.ctx.registry, tenantId, e)
  } catch (err) {
    b.ctx.log.error('could not write entitlements', { tenant_id: tenantId, error: String(err) })
  }
  announce(b, tenantId, e)
}

/** Tells parts on their own data dirs (DESIGN §12) what billing just wrote to its file. */
function announce(b: Billing, tenantId: string, e: Entitlements | null): void {
  b.db.write(() =>
    emitEvent(
      b.db,
      { topic: topics.entitlementsChanged, tenantId, data: { entitlements: e } },
      b.ctx.clock,
    ),
  )
}
