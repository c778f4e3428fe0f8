import { type Static, t } from 'elysia'
import { ROLES } from './vocabulary.ts'

/**
 * Answers one service gives another over HTTP, declared once: the callee's route answers with
 * these schemas and the caller reads them as their static types (the tenant service asks auth for
 * users and billing for plans; billing asks payment for an STK push).
 */

export const Role = t.Union([
  t.Literal(ROLES[0]),
  t.Literal(ROLES[1]),
  t.Literal(ROLES[2]),
  t.Literal(ROLES[3]),
])

// auth: users

export const CreatedUser = t.Object({
  id: t.String(),
  tenant_id: t.String(),
  email: t.String(),
  role: Role,
  status: t.String(),
  invite_token: t.Optional(t.String()),
  /** The dashboard page that sets the password and signs in (`gateway.public_url`). */
  invite_url: t.Optional(t.String()),
  expires_at: t.Optional(t.String()),
})
export type CreatedUser = Static<typeof CreatedUser>

export const UserList = t.Object({
  data: t.Array(
    t.Object({
      id: t.String(),
      tenant_id: t.String(),
      email: t.String(),
      role: Role,
      status: t.String(),
      created_at: t.String(),
    }),
  ),
})
export type UserList = Static<typeof UserList>

export const RemovedUsers = t.Object({ removed: t.Integer() })
export type RemovedUsers = Static<typeof RemovedUsers>

// billing: plans

const Limit = t.Nullable(t.Integer({ minimum: 0, description: 'null: unlimited' }))

export const PlanLimits = t.Object({
  transactions: Limit,
  statements: Limit,
  users: Limit,
  webhook_endpoints: Limit,
})

export const PlanFeatures = t.Object({
  advanced_analytics: t.Boolean(),
  bulk_upload: t.Boolean(),
  api_access: t.Boolean(),
})

export const PlanOverage = t.Object(
  {
    transactions: t.Optional(t.Number({ minimum: 0 })),
    statements: t.Optional(t.Number({ minimum: 0 })),
  },
  { description: 'price per unit used past a limit (decimal KES)' },
)

export const PlanTier = t.Union([t.Literal('free'), t.Literal('pro'), t.Literal('enterprise')], {
  description: 'the isolation tier the plan puts a tenant in (DESIGN §3)',
})

export const Plan = t.Object(
  {
    id: t.String(),
    name: t.String(),
    tier: PlanTier,
    price: t.Number(),
    currency: t.String(),
    interval: t.Literal('month'),
    limits: PlanLimits,
    features: PlanFeatures,
    overage: PlanOverage,
  },
  { title: 'Plan' },
)
export type Plan = Static<typeof Plan>

// payment: STK push

export const PaymentStatus = t.Union(
  [
    t.Literal('pending'),
    t.Literal('unknown'),
    t.Literal('success'),
    t.Literal('failed'),
    t.Literal('cancelled'),
    t.Literal('timeout'),
  ],
  {
    description:
      'pending until the customer answers, then the final result; unknown when the provider may have the request but its answer was lost (settled by its callback or a query, never retried)',
  },
)

export const StkPushAccepted = t.Object({
  checkout_request_id: t.String({
    description: "the provider's CheckoutRequestID; our payment id while it is unknown",
  }),
  merchant_request_id: t.String(),
  status: PaymentStatus,
})
export type StkPushAccepted = Static<typeof StkPushAccepted>

// billing: usage (the tenant service answers it too, with the tenant's plan)

const MetricUsage = t.Object({ used: t.Nullable(t.Integer()), limit: t.Nullable(t.Integer()) })
export const UsageStats = t.Object(
  {
    tenant_id: t.String(),
    plan: t.String(),
    status: t.String(),
    period_start: t.String(),
    period_end: t.String(),
    metrics: t.Record(t.String(), MetricUsage),
  },
  { title: 'UsageStats' },
)
export type UsageStats = Static<typeof UsageStats>
