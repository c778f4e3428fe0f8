import { t } from 'elysia'
import { PlanTerms } from '../../schema/events.ts'
import {
  Plan,
  PlanFeatures,
  PlanLimits,
  PlanOverage,
  PlanTier,
  UsageStats,
} from '../../schema/peers.ts'
import { Entitlements } from '../../schema/profiles.ts'

export { Plan, PlanFeatures, PlanLimits, PlanOverage, PlanTier }

/** Request and response schemas of the billing API (DESIGN §11). Money is decimal KES. */

export const CreatePlanBody = t.Object({
  id: t.Optional(t.String({ pattern: '^[a-z0-9][a-z0-9_-]{1,62}$' })),
  name: t.String({ minLength: 1, maxLength: 100 }),
  price: t.Number({ minimum: 0 }),
  tier: t.Optional(PlanTier),
  currency: t.Optional(t.Literal('KES')),
  interval: t.Optional(t.Literal('month')),
  limits: PlanLimits,
  features: t.Optional(t.Partial(PlanFeatures)),
  overage: t.Optional(PlanOverage),
})
export type CreatePlanBody = typeof CreatePlanBody.static

/** A subscription's status: the one entitlements carry to every service (schema/profiles.ts). */
export const SubscriptionStatus = Entitlements.properties.status
export type SubscriptionStatus = typeof SubscriptionStatus.static

export const Subscription = t.Object(
  {
    id: t.String(),
    tenant_id: t.String(),
    plan: t.String(),
    status: SubscriptionStatus,
    current_period_start: t.String(),
    current_period_end: t.String(),
    grace_period_ends: t.Nullable(t.String()),
    cancel_at_period_end: t.Boolean(),
    credit: t.Number({ description: 'credit (KES) carried to the next invoice' }),
    created_at: t.String(),
    updated_at: t.String(),
  },
  { title: 'Subscription' },
)
export type Subscription = typeof Subscription.static

export const SubscriptionEvent = t.Object(
  {
    id: t.String(),
    tenant_id: t.String(),
    reason: t.String(),
    plan: t.String(),
    previous_plan: t.Nullable(t.String()),
    status: t.String(),
    previous_status: t.Nullable(t.String()),
    current_period_start: t.String(),
    current_period_end: t.String(),
    occurred_at: t.String(),
  },
  { title: 'SubscriptionEvent' },
)

export const UpgradeBody = t.Object({
  tenant_id: t.String(),
  plan: t.String({ minLength: 1 }),
})

/**
 * The answer of a plan change: the subscription with what `subscriptions.changed` tells the tenant
 * service, so the tenant's door applies the same facts the event carries.
 */
export const UpgradedSubscription = t.Composite([
  Subscription,
  t.Object({
    plan_revision: t.Integer({ description: 'raised by every plan change of the subscription' }),
    plan_terms: t.Nullable(PlanTerms),
  }),
])

export const usageMetrics = ['transactions', 'statements', 'payments', 'api_calls'] as const
export type UsageMetric = (typeof usageMetrics)[number]

export const UsageRecordBody = t.Object({
  tenant_id: t.String(),
  metric: t.Union(usageMetrics.map((m) => t.Literal(m))),
  quantity: t.Integer({ minimum: 0, maximum: 1_000_000_000 }),
  event_id: t.String({ minLength: 1, maxLength: 200 }),
})

export const UsageRecord = t.Object({
  id: t.String(),
  tenant_id: t.String(),
  metric: t.String(),
  quantity: t.Integer(),
  event_id: t.String(),
  period_start: t.String(),
  recorded_at: t.String(),
  duplicate: t.Boolean({ description: 'true when this event_id was recorded before (ignored)' }),
})

export { UsageStats }

export const InvoiceLine = t.Object(
  {
    type: t.Union([
      t.Literal('base'),
      t.Literal('overage'),
      t.Literal('proration'),
      t.Literal('credit'),
    ]),
    description: t.String(),
    quantity: t.Number(),
    unit_amount: t.Number(),
    amount: t.Number(),
    metric: t.Optional(t.String()),
  },
  { title: 'InvoiceLine' },
)
export type InvoiceLine = typeof InvoiceLine.static

export const InvoiceStatus = t.Union([
  t.Literal('open'),
  t.Literal('paid'),
  t.Literal('past_due'),
  t.Literal('void'),
])

export const PaymentAttempt = t.Object(
  {
    id: t.String(),
    checkout_request_id: t.Nullable(t.String()),
    amount: t.Number(),
    phone_number: t.Nullable(t.String()),
    status: t.String(),
    result_desc: t.Nullable(t.String()),
    created_at: t.String(),
    updated_at: t.String(),
  },
  { title: 'PaymentAttempt' },
)

export const Invoice = t.Object(
  {
    id: t.String(),
    number: t.String(),
    tenant_id: t.String(),
    status: InvoiceStatus,
    plan: t.String(),
    period_start: t.String(),
    period_end: t.String(),
    lines: t.Array(InvoiceLine),
    subtotal: t.Number(),
    total: t.Number(),
    currency: t.String(),
    issued_at: t.String(),
    due_at: t.String(),
    paid_at: t.Nullable(t.String()),
    payment_attempts: t.Optional(t.Array(PaymentAttempt)),
  },
  { title: 'Invoice' },
)
export type Invoice = typeof Invoice.static

export const InvoiceList = t.Object({
  data: t.Array(Invoice),
  next_cursor: t.Nullable(t.String()),
  has_more: t.Boolean(),
})

export const PayBody = t.Object({
  phone_number: t.String({ pattern: '^[0-9]{9,15}$', description: 'digits with country prefix' }),
})

export const RunCycleBody = t.Object({
  at: t.Optional(t.String({ description: 'ISO 8601 time the cycle runs as of (default now)' })),
})

export const CycleReport = t.Object({
  at: t.String(),
  invoices: t.Array(t.String()),
  renewed: t.Array(t.String()),
  past_due: t.Array(t.String()),
  suspended: t.Array(t.String()),
})
export type CycleReport = typeof CycleReport.static

/** The OpenAPI detail of a route that takes a bearer token. */
export const secured = (summary: string) => ({
  summary,
  tags: ['billing'],
  security: [{ bearer: [] }],
})
